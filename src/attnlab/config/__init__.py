"""Typed, validated access to params.yaml: the single source of truth for every knob."""

from attnlab.config.base import Section
from attnlab.config.data import BpeParams, DownloadParams, TokenizeParams
from attnlab.config.evaluation import CurveParams, EvaluateParams
from attnlab.config.loader import Params, load_params, parse_params
from attnlab.config.probes import CostParams, ProbesParams
from attnlab.config.sweeps import StudyParams, SweepsParams, catalogue_choice
from attnlab.config.training import CheckpointParams, RuntimeParams, TrainerParams, WandbParams
from attnlab.config.winograd import WinogradParams

__all__ = [
    "BpeParams",
    "CheckpointParams",
    "CostParams",
    "CurveParams",
    "DownloadParams",
    "EvaluateParams",
    "Params",
    "ProbesParams",
    "Section",
    "StudyParams",
    "SweepsParams",
    "TokenizeParams",
    "RuntimeParams",
    "TrainerParams",
    "WandbParams",
    "WinogradParams",
    "catalogue_choice",
    "load_params",
    "parse_params",
]
