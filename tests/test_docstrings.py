"""Every public object of mtplug has a docstring (issue 22), and every optimizer class
documents each of its options.

Public: a module whose dotted name has no part starting with ``_``; a function or class
defined at the top level of such a module (re-exports are checked where they are
defined) whose name has no leading ``_``; a method, static/class method or property of
a public class, defined in that class, without a leading ``_``. An override without a
docstring of its own inherits the one of the method it overrides (as :func:`inspect.getdoc`
does). A hand-written ``__init__`` that takes arguments counts too unless the class
docstring names every one of them.

Every module is imported (so a module that fails to import fails here), except:
- ``mtplug._ext.*``: the compiled kernels, private by their path; their documentation is
  the ``.pyi`` stub beside each (the ``.so`` holds whatever Cython embeds);
- ``mtplug.__main__``: it runs the command line when imported (``sys.exit(main())``).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import pkgutil
import pydoc
import re

import mtplug
from mtplug.optimizers.registry import OPTIMIZER_NAMES, get_optimizer

NOT_IMPORTED = {"mtplug.__main__"}


def _modules() -> dict:
    """Dotted name -> module, for every module under mtplug but the ones excluded above."""
    errors: list[str] = []
    names = ["mtplug"] + [m.name for m in pkgutil.walk_packages(mtplug.__path__, "mtplug.", onerror=errors.append)
                          if not m.name.startswith("mtplug._ext.") and m.name not in NOT_IMPORTED]
    assert not errors, f"packages that failed to import: {errors}"
    return {name: importlib.import_module(name) for name in names}


def _private(dotted: str) -> bool:
    return any(part.startswith("_") for part in dotted.split("."))


def _member_function(member):
    """The function behind a method, static/class method or property; None for other attributes."""
    if isinstance(member, (staticmethod, classmethod)):
        return member.__func__
    if isinstance(member, property):
        return member.fget
    if isinstance(member, functools.cached_property):
        return member.func
    return member if inspect.isfunction(member) else None


def _member_doc(cls, name: str) -> str | None:
    """The docstring of member ``name`` of ``cls``, or of the first base class member it overrides."""
    for klass in cls.__mro__:
        if name in vars(klass):
            member = vars(klass)[name]
            doc = member.__doc__ if isinstance(member, property) else getattr(_member_function(member), "__doc__", None)
            if doc and doc.strip():
                return doc
    return None


def _undocumented_init_args(cls) -> list[str]:
    """Arguments of a hand-written ``__init__`` that neither it nor the class docstring names."""
    init = vars(cls).get("__init__")
    if not inspect.isfunction(init) or init.__code__.co_filename != inspect.getfile(cls):
        return []   # none, or made by @dataclass from the fields
    if init.__doc__ and init.__doc__.strip():
        return []
    text = cls.__doc__ or ""
    return [p for p in list(inspect.signature(init).parameters)[1:] if not re.search(rf"\b{re.escape(p)}\b", text)]


def _own_doc(obj) -> str | None:
    """``obj.__doc__``, but None for the text @dataclass and namedtuple make up from the
    signature of a class that has no docstring."""
    doc = obj.__doc__
    if inspect.isclass(obj) and doc:
        made_up = []
        if dataclasses.is_dataclass(obj):
            made_up.append(obj.__name__ + str(inspect.signature(obj)).replace(" -> None", ""))
        if issubclass(obj, tuple) and hasattr(obj, "_fields"):
            made_up.append(f"{obj.__name__}({', '.join(obj._fields)})")
        if doc in made_up:
            return None
    return doc


def public_objects() -> list[tuple[str, str | None]]:
    """(dotted name, docstring) of every public object, in module order."""
    out: list[tuple[str, str | None]] = []
    for module_name, module in _modules().items():
        if _private(module_name):
            continue
        out.append((module_name, module.__doc__))
        for name, obj in vars(module).items():
            if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if getattr(obj, "__module__", None) != module_name:
                continue
            out.append((f"{module_name}.{name}", _own_doc(obj)))
            if not inspect.isclass(obj):
                continue
            fields = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
            for member_name, member in vars(obj).items():
                # a dataclass field's default (a lambda) is a value, not a method
                if not member_name.startswith("_") and member_name not in fields \
                        and _member_function(member) is not None:
                    out.append((f"{module_name}.{name}.{member_name}", _member_doc(obj, member_name)))
            missing = _undocumented_init_args(obj)
            if missing:
                out.append((f"{module_name}.{name}.__init__ (arguments {', '.join(missing)})", None))
    return out


def test_every_public_object_has_a_docstring():
    objects = public_objects()
    missing = [name for name, doc in objects if not (doc and doc.strip())]
    assert not missing, f"{len(missing)} of {len(objects)} public objects have no docstring:\n  " + "\n  ".join(missing)


def test_every_optimizer_documents_each_option():
    problems = []
    for name in OPTIMIZER_NAMES:
        cls = get_optimizer(name)
        doc = inspect.getdoc(cls) or ""
        prose = doc.split("Options\n-------")[0].strip()
        if not prose:
            problems.append(f"{name}: {cls.__name__} has no docstring of its own (only the generated options)")
        for opt in cls.options:
            if f"``{opt}``" not in doc or "--" + opt.replace("_", "-") not in doc:
                problems.append(f"{name}: the docstring of {cls.__name__} does not name option {opt}")
    assert not problems, "\n".join(problems)


def test_help_shows_the_generated_options_once():
    from mtplug.optimizers.mert import Mert

    text = pydoc.render_doc(Mert, renderer=pydoc.plaintext)
    assert "``restarts`` (``--restarts N``; int; default ``20``)" in text
    assert len(re.findall(r"Options\n[ |]*-------", text)) == 1


def test_every_name_in_all_has_a_docstring():
    missing = []
    for name in mtplug.__all__:
        obj = getattr(mtplug, name)
        if isinstance(obj, (str, int, float, tuple, dict)):   # __version__ and other plain values
            continue
        if not (inspect.getdoc(obj) or "").strip():
            missing.append(name)
    assert not missing, f"names in mtplug.__all__ without a docstring: {', '.join(missing)}"
