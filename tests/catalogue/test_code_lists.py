"""One hop, checked: a catalogue entry's ``code:`` names every module that shapes its numbers.

The modules that shape an experiment are derived from its entry and the imports of the
code, never from a list kept by hand:

- **Its stages.** P0's entry owns the pipeline every trained row runs (``download``,
  ``bpe``, ``tokenize``, ``train``, ``evaluate``). A Winograd experiment (``task``) owns
  the Winograd stages, and ``winograd-maps`` when params ``winograd.maps.variant`` is one
  of its rows; E14 (``probe: cost``) owns ``cost``; the sweeps own ``sweep`` and
  ``sweep-check``. A stage counts through the command module that dvc.yaml runs for it.
- **Its measurements, probe and claim rules.** For each name of its ``measure`` and
  ``along``, the function the evaluate stage's registry runs for it (after training, and
  along it); for its ``probe`` (``probes/<name>``), what the probes stage computes under
  ``<name>``; for every rule its claims use, the function the rule registry builds it with.
  Each counts through its own module and the modules of the names its code reads
  (following the functions and classes of its own module that it reads; annotations left
  out).

From those starting points, every module of the code that computes a number
(``SHAPING``) that they import, directly or through other such modules, shapes the
experiment (:mod:`import_graph`). P0's entry names all of its own; every other entry
names what it adds to P0's: what its starting points import beyond P0's pipeline, and the
modules of its measurements, probe and rules themselves even where P0's pipeline imports
them too (``evaluate`` imports every measurement, but E11's is E11's). A package in
``code:`` names every module in it.

docs/catalogue.md's section of each trained experiment names its rows, its measurements
and its claim rules.
"""

import ast
import re
from functools import cache
from pathlib import Path

import pytest
from import_graph import closure, defining_module, imports, syntax, uses

from attnlab.catalogue import Experiment, experiments
from attnlab.cli import STAGES
from attnlab.config.files import read_params_mapping
from attnlab.evaluation.measurements import MEASUREMENTS
from attnlab.verdicts.claim_rules import RULES

ROOT = Path(__file__).resolve().parents[2]
# The parts of attnlab whose code computes a result: packages, and the one module of the
# catalogue that the Winograd sentences are built from (its template). Config, the rest of
# the catalogue and paths carry values to this code; the report lays out what it computed.
SHAPING = (
    "architecture",
    "models",
    "data",
    "training",
    "metrics",
    "runs",
    "evaluation",
    "probes",
    "winograd",
    "catalogue.winograd",
    "sweeps",
    "verdicts",
)
PIPELINE = ("download", "bpe", "tokenize", "train", "evaluate")
WINOGRAD = ("winograd-data", "winograd-train", "winograd-score")
PROBES = "attnlab.stages.probes"  # computes every probe of probes/, keyed by name
MAPS_VARIANT = read_params_mapping(ROOT / "params.yaml")["winograd"]["maps"]["variant"]
ENTRIES = list(experiments().items())


def _stages(key: str, entry: Experiment) -> tuple[str, ...]:
    """The stages whose code the entry names (dvc.yaml's names)."""
    if key == "P0":
        return PIPELINE
    if key == "sweeps":
        return ("sweep", "sweep-check")
    if entry.probe == "cost":
        return ("cost",)
    if entry.task is not None:
        return WINOGRAD + (("winograd-maps",) if MAPS_VARIANT in entry.variants else ())
    return ()


def _rules(specs) -> set[str]:
    """Every rule ``specs`` use, an ``all_of``'s parts included."""
    return {spec.rule for spec in specs} | {r for spec in specs for r in _rules(spec.parts)}


def _probe_uses(name: str) -> set[str]:
    """The modules of the names the probes stage reads to compute probe ``name``."""
    bound = {found.bound: found for found in imports(PROBES)}
    computed = [
        value
        for node in ast.walk(syntax(PROBES))
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values, strict=True)
        if isinstance(key, ast.Constant) and key.value == name
    ]
    read = {n.id for value in computed for n in ast.walk(value) if isinstance(n, ast.Name)}
    found = {defining_module(bound[n].target, bound[n].name) for n in read & set(bound)}
    assert found, f"{PROBES} computes no probe {name!r}"
    return found


def _own(entry: Experiment) -> tuple[set[str], set[str]]:
    """The modules of the entry's measurements, probe and claim rules, and what they read."""
    functions = [MEASUREMENTS[name].measure for name in entry.measure]
    functions += [MEASUREMENTS[name].along for name in entry.along]
    functions += [RULES[rule] for rule in _rules(entry.claims)]
    homes = {function.__module__ for function in functions}
    read = {m for function in functions for m in uses(function.__module__, function.__name__)}
    if entry.probe and entry.probe.startswith("probes/"):
        read |= _probe_uses(Path(entry.probe).name)
    return homes, read


@cache
def _pipeline() -> frozenset[str]:
    return frozenset(closure({STAGES[stage] for stage in PIPELINE}, within=shapes))


def shapes(module: str) -> bool:
    """Whether ``module`` is one of ``SHAPING`` or inside one."""
    return any(
        module == f"attnlab.{part}" or module.startswith(f"attnlab.{part}.") for part in SHAPING
    )


def shaping_modules(key: str, entry: Experiment) -> set[str]:
    """The modules of attnlab that shape experiment ``key`` and its entry must name."""
    homes, read = _own(entry)
    reached = closure(read | {STAGES[stage] for stage in _stages(key, entry)}, within=shapes)
    named = reached if key == "P0" else homes | read | (reached - _pipeline())
    return {module for module in named if shapes(module)}


@pytest.mark.parametrize(("key", "entry"), ENTRIES, ids=[key for key, _ in ENTRIES])
def test_code_names_every_module_that_shapes_the_experiment(key, entry):
    def named(module: str) -> bool:
        return any(module == code or module.startswith(f"{code}.") for code in entry.code)

    missing = sorted(m for m in shaping_modules(key, entry) if not named(m))
    assert missing == [], f"{key}: code: misses {', '.join(missing)}"


def test_the_derivation_finds_what_the_story_says_shapes_an_experiment():
    entries = dict(ENTRIES)
    assert "attnlab.evaluation.gradients" in shaping_modules("E11", entries["E11"])
    assert "attnlab.evaluation.attention_stats" in shaping_modules("E08", entries["E08"])
    assert "attnlab.probes.averages" in shaping_modules("E03", entries["E03"])
    assert "attnlab.winograd.maps" in shaping_modules("E17", entries["E17"])
    assert "attnlab.winograd.maps" not in shaping_modules("E16", entries["E16"])
    assert "attnlab.training.fit" in shaping_modules("P0", entries["P0"])
    assert "attnlab.training.fit" not in shaping_modules("E16", entries["E16"])  # P0's


def _section(key: str) -> str:
    """The text of the section of docs/catalogue.md whose heading names ``key``."""
    docs = (ROOT / "docs" / "catalogue.md").read_text(encoding="utf-8")
    heading = re.search(rf"^(#{{2,3}}) .*\b{key}\b.*$", docs, flags=re.M)
    assert heading, f"docs/catalogue.md has no section for {key}"
    level = len(heading.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", flags=re.M).search(docs, heading.end())
    return docs[heading.start() : end.start() if end else len(docs)]


TRAINED = [(key, entry) for key, entry in ENTRIES if entry.rows]


@pytest.mark.parametrize(("key", "entry"), TRAINED, ids=[key for key, _ in TRAINED])
def test_a_trained_experiments_section_names_its_rows_measurements_and_claim_rules(key, entry):
    section = _section(key)
    named = [*entry.variants, *entry.measure, *sorted(_rules(entry.claims))]
    missing = [name for name in named if f"`{name}`" not in section]
    assert missing == [], f"docs/catalogue.md, {key}'s section does not name {missing}"
