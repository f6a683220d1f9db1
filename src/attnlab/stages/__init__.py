"""The command of every DVC stage: one module per stage, named after it (``stages.train``).

Each module's ``main`` reads its typed params, calls the library and writes exactly the
outputs ``dvc.yaml`` declares (the paths of :mod:`attnlab.paths`). ``pipeline/<stage>.py``,
what ``dvc.yaml`` runs, is a thin entry point into it; ``python -m attnlab.stages.<stage>``
and ``attnlab <stage>`` run the same command. No other part of the library imports these
but :mod:`attnlab.cli`; :mod:`attnlab.stages.command` holds what the commands share.
"""
