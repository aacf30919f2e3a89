# ---
# jupyter:
#   jupytext:
#     formats: py:percent
# ---

# %% [markdown]
# 富输出示例：matplotlib 图、pandas 表格（Styler 着色）、公式和一段很长的输出，都由真实运行得出。
# 主题是张量的内存占用：元素个数乘以每个元素的字节数。

# %% name="setup"
import matplotlib.pyplot as plt
import pandas as pd
import torch
from IPython.display import Math

SHAPE = (4096, 4096)
DTYPES = [torch.float64, torch.float32, torch.bfloat16, torch.float16, torch.int8, torch.float8_e4m3fn]

# %% name="table"
rows = [{"dtype": str(dtype).removeprefix("torch."),
         "bytes/element": torch.empty(0, dtype=dtype).element_size(),
         "MiB": torch.empty(SHAPE, dtype=dtype).nbytes / 2**20} for dtype in DTYPES]
frame = pd.DataFrame(rows).set_index("dtype")
frame.style.format({"MiB": "{:.0f}"}).highlight_min(subset=["MiB"], color="#c8e6c9")

# %% name="figure"
fig, ax = plt.subplots(figsize=(6, 2.8))
ax.barh(frame.index[::-1], frame["MiB"][::-1], color="#5c6bc0")
ax.set_xlabel(f"MiB for a {SHAPE[0]}×{SHAPE[1]} tensor")
fig.tight_layout()
plt.show()

# %% name="formula"
half = torch.empty(SHAPE, dtype=torch.bfloat16)
Math(rf"\mathrm{{bytes}} = \mathrm{{numel}} \times \mathrm{{element\_size}}"
     rf" = {SHAPE[0]}^2 \times {half.element_size()} = {half.nbytes // 2**20}\,\mathrm{{MiB}}")

# %% name="model"
model = torch.nn.Transformer(d_model=64, nhead=2, num_encoder_layers=3, num_decoder_layers=3,
                             dim_feedforward=128, batch_first=True)
for name, parameter in model.named_parameters():
    print(f"{name:<50} {tuple(parameter.shape)!s:>10} {parameter.nbytes:>8,} B")
print(f"{'total':<50} {'':>10} {sum(p.nbytes for p in model.parameters()):>8,} B")
