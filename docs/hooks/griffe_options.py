"""griffe extensions: each optimizer class's docstring as Python sees it, and Sphinx roles as code.

``Optimizer.__init_subclass__`` appends an "Options" section, made from the class's
``options`` table, to every optimizer's docstring when the class is created; griffe reads
the source, where that section is not. This puts the runtime docstring of every class in
the optimizer registry in the static data, so the API reference shows the options the CLI
is built from. Everything else stays static.
"""

from __future__ import annotations

import inspect
import re

import griffe

# Sphinx roles (:func:`x`, :class:`~a.b.C`) as the docstrings write them, for help() and IDEs
_ROLE = re.compile(r":(?:func|meth|class|mod|data|attr|exc|obj):`~?([^`]+)`")


class SphinxRoles(griffe.Extension):
    """Shows Sphinx roles in docstrings as code (Markdown would print the role's text)."""

    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(r"`\1`", obj.docstring.value)


class OptimizerOptions(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        if pkg.name != "mtplug":
            return
        from mtplug.optimizers.registry import OPTIMIZER_NAMES, get_optimizer

        for name in OPTIMIZER_NAMES:
            cls = get_optimizer(name)
            path = f"{cls.__module__}.{cls.__qualname__}".removeprefix("mtplug.")
            obj = pkg[path]
            obj.docstring = griffe.Docstring(_ROLE.sub(r"`\1`", inspect.cleandoc(cls.__doc__ or "")), parent=obj)
