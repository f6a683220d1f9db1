"""The report (issue: report): every experiment's tables, figures and claim verdicts.

The report stage reads what the pipeline measured (:func:`load_results`), has every
decision made in one call (:func:`attnlab.verdicts.decide`) and hands both to
:func:`build_report` (:mod:`attnlab.report.build`), which lays them out. Nothing here
decides a claim. The names below load their module on first use, so that reading one
module of the report (its content types, its figures) loads none of the rest.
"""

from attnlab.lazy import lazy_exports

__getattr__ = lazy_exports(
    __name__,
    {
        "build": ("Report", "build_report"),
        "inputs": ("ReportInputs", "Results", "load_results"),
    },
)

__all__ = ["Report", "ReportInputs", "Results", "build_report", "load_results"]
