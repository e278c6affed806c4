"""The sample list's layouts and saved views: columns, page size, and named filters leads
keep and share (the list page itself is annotation/sample_views.py)."""
