"""A tiny renderer for the prompt templates in this folder: `{{ name }}` placeholders, nothing else."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


class PromptError(KeyError):
    """A template is missing, or a placeholder has no value."""


@lru_cache(maxsize=None)
def template(name: str) -> str:
    """The raw text of `prompts/<name>.md`."""
    path = resources.files("prompts") / f"{name}.md"
    if not path.is_file():
        raise PromptError(f"no prompt template named {name!r}")
    return path.read_text(encoding="utf-8")


def placeholders(name: str) -> set[str]:
    """The placeholder names a template uses."""
    return set(_PLACEHOLDER.findall(template(name)))


def render(name: str, **values: object) -> str:
    """Fill a template; every placeholder needs a value and every value a placeholder."""
    text = template(name)
    needed = set(_PLACEHOLDER.findall(text))
    missing, extra = needed - values.keys(), values.keys() - needed
    if missing or extra:
        raise PromptError(f"prompt {name!r}: missing {sorted(missing)}, unexpected {sorted(extra)}")
    # One pass, so a value that itself contains `{{ x }}` is never expanded.
    return _PLACEHOLDER.sub(lambda m: str(values[m[1]]), text).strip() + "\n"
