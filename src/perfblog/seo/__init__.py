"""SEO for a Chinese-first technical blog: meta tags, keyword analysis, page audit, sitemaps, submission."""
