"""The report's site wing: `publish` writes a static site of many runs (the index, each run's report,
a history per GPU, the GPU models side by side), rendering a page again only where its run or the
code changed (page_cache, digest), and marking the slowdowns the verdict engine confirms in each
history (step_detect, slowdowns). It is built on the report's pages; nothing in report/ outside it
imports it."""
