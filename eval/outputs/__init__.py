"""How eval's results are written, the lowest of eval's roles: JSON-safe values, number formatting,
Markdown and CSV text, the JSON/CSV/Markdown writers of every table and figure files
(:mod:`.writers`), and pandas data frames of scores and studies (:mod:`.frames`).

May import ``pmask.common`` (and, as every module of eval, the wings below eval); no other role of eval.
"""
