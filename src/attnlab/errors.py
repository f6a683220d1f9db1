"""User-facing errors: raised for bad input, printed without a traceback by the stage runner."""


class AttnlabError(Exception):
    """An error the user can fix (bad params, a corrupt download, a broken checkpoint)."""


class ParamsError(AttnlabError, ValueError):
    """params.yaml holds an unknown key, a wrong type or an impossible value."""


class CorpusError(AttnlabError):
    """The corpus could not be fetched, or its bytes do not match the expected SHA-256."""


class DivergedError(AttnlabError):
    """A training loss, a perplexity or a weight became non-finite: the run diverged."""
