"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.evals.benchmarks.math``."""

from . import AIME_PROMPT_SUFFIX, AIMEEnv, GSM8KEnv, MathEnv, MathExample, aime, gsm8k, make_example_id

__all__ = ["AIME_PROMPT_SUFFIX", "AIMEEnv", "GSM8KEnv", "MathEnv", "MathExample", "aime", "gsm8k", "make_example_id"]
