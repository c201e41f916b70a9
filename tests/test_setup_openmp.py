"""setup.py's OpenMP choice: a test compile on the build's compiler decides, MTPLUG_OPENMP
overrides it, and the installed kernels are the build that choice makes."""

from __future__ import annotations

import importlib.util
import os
import stat

import pytest
import setuptools  # noqa: F401 - first, so that distutils is the one setup.py's build uses

from distutils.ccompiler import new_compiler  # noqa: E402
from distutils.errors import CompileError  # noqa: E402
from distutils.sysconfig import customize_compiler  # noqa: E402
from mtplug._ext import _build_info  # noqa: E402

from .conftest import REPO


@pytest.fixture(scope="module")
def setup_py():
    """setup.py as a module (it calls setup() only when run as __main__)."""
    spec = importlib.util.spec_from_file_location("mtplug_setup", REPO / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BrokenCompiler:
    """A compiler that fails whatever it is asked: MTPLUG_OPENMP must decide without it."""

    def compile(self, *args, **kwargs):
        raise CompileError("no compiler here")


def compiler_rejecting_openmp(tmp_path):
    """The build's own compiler behind a wrapper that refuses -fopenmp, as Apple's clang does."""
    compiler = new_compiler()
    customize_compiler(compiler)
    wrapper = tmp_path / "cc-without-openmp"
    wrapper.write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do\n"
        "  if [ \"$a\" = -fopenmp ]; then echo \"clang: error: unsupported option '-fopenmp'\" >&2; exit 1; fi\n"
        "done\n"
        f"exec {compiler.compiler_so[0]} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    compiler.set_executables(compiler_so=[str(wrapper), *compiler.compiler_so[1:]],
                             linker_exe=[str(wrapper), *compiler.linker_exe[1:]])
    return compiler


def test_environment_variable_overrides_the_test_compile(setup_py):
    assert setup_py.openmp_flags({"MTPLUG_OPENMP": "0"}, BrokenCompiler()) == []
    assert setup_py.openmp_flags({"MTPLUG_OPENMP": "1"}, BrokenCompiler()) == ["-fopenmp"]
    assert setup_py.openmp_flags({}, BrokenCompiler()) == []


def test_compiler_without_openmp_falls_back_to_a_serial_build(setup_py, tmp_path, capsys):
    compiler = compiler_rejecting_openmp(tmp_path)
    assert not setup_py.compiles_with_openmp(compiler)
    assert setup_py.openmp_flags({}, compiler) == []
    assert "without it, one thread each" in capsys.readouterr().err


def test_installed_kernels_are_the_build_setup_py_chooses(setup_py):
    # under CI's MTPLUG_OPENMP=0 step this proves the tests ran against a serial build
    expected = bool(setup_py.openmp_flags(os.environ))
    assert _build_info.OPENMP == expected, (
        f"the installed kernels were built with OpenMP={_build_info.OPENMP}, but setup.py now chooses "
        f"OpenMP={expected} (MTPLUG_OPENMP={os.environ.get('MTPLUG_OPENMP')!r}): rebuild with pip install -e .")


def test_in_place_copies_replace_a_loaded_module_by_rename(setup_py, tmp_path):
    """``pip install -e .`` copies each built module into mtplug/_ext: a process that has
    the old file mapped must keep reading the old bytes (a new file, not a rewrite)."""
    from setuptools.dist import Distribution

    built, target = tmp_path / "new.so", tmp_path / "module.so"
    built.write_bytes(b"new build")
    target.write_bytes(b"old build")
    with open(target, "rb") as loaded:
        cmd = setup_py.BuildExt(Distribution())
        assert cmd.copy_file(str(built), str(target)) == (str(target), 1)
        assert loaded.read() == b"old build"
    assert target.read_bytes() == b"new build"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["module.so", "new.so"]
