"""Task synthesis (C-World §2.2): sample tools → draft → check → revise → fuzzy rewrite → verify by execution."""
