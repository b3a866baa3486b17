"""``rolloutgym check``: an env's report card (the quality gate anyone can run on their env).

    import rolloutgym as rg

    report = rg.check("my_env.py", sample=10)     # or an id, a Harbor folder, a served env's URL
    print(report.ok, [result.name for result in report.failures])

Checks (:data:`ALL_CHECKS`): the oracle's ``ceiling``, the null ``floor``, ``determinism``, the
hack ``probe`` (one ``probe:NAME`` per class of exploit, extended by the ``rolloutgym_hack_probes``
hook), a static ``lint`` of the task data (and ``lint:folder`` of Harbor folders), measured
``containment`` and ``signal``. ``rolloutgym check ENV`` prints the card; the conformance kit's
pytest plugin (``rolloutgym_testing``) runs the same code.
"""

from ._answer_probes import near_miss
from ._engine import ALL_CHECKS, DEFAULT_CHECKS, check
from ._hack import BUILTIN_PROBES, probe_classes
from ._records import FAIL, KNOWN, PASS, SKIP, WARN, CheckReport, CheckResult
from .probes import EnvView, HackProbe, ProbeNotApplicable, observation_text, tool_definitions

__all__ = [
    "ALL_CHECKS",
    "BUILTIN_PROBES",
    "DEFAULT_CHECKS",
    "FAIL",
    "KNOWN",
    "PASS",
    "SKIP",
    "WARN",
    "CheckReport",
    "CheckResult",
    "EnvView",
    "HackProbe",
    "ProbeNotApplicable",
    "check",
    "near_miss",
    "observation_text",
    "probe_classes",
    "tool_definitions",
]
