"""Build the Cython kernels in pyx/ as mtplug._ext.<name>.

This is the one place that sets Cython directives. MTPLUG_CYTHON_DEBUG=1 turns bounds
checking, wraparound and initialisation checks back on (CI runs the tests once more so).

OpenMP (kernels that loop over sentences run them in ``prange``) is used when a test
program with ``#include <omp.h>`` compiles and links with ``-fopenmp`` on the compiler the
build will use; otherwise (Apple's clang, say) the kernels are built without it and every
``prange`` runs as a serial loop, with the same results. MTPLUG_OPENMP=0 forces the
serial build, MTPLUG_OPENMP=1 insists on OpenMP (no test). ``mtplug --version`` tells
which build is installed.
"""
import os
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# after setuptools, as its build_ext imports them: the compiler classes and their errors
from distutils.ccompiler import new_compiler  # noqa: E402
from distutils.errors import CCompilerError, DistutilsExecError  # noqa: E402
from distutils.sysconfig import customize_compiler  # noqa: E402

HERE = Path(__file__).parent
DEBUG = os.environ.get("MTPLUG_CYTHON_DEBUG", "0") not in ("", "0")

DIRECTIVES = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}

OPENMP_FLAGS = ["-fopenmp"]
OPENMP_TEST = "#include <omp.h>\nint main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }\n"


def compiles_with_openmp(compiler=None) -> bool:
    """Whether ``compiler`` (default: the one build_ext will use, CC/CFLAGS applied)
    compiles and links a program that includes omp.h and calls the OpenMP runtime."""
    if compiler is None:
        compiler = new_compiler()
        customize_compiler(compiler)
    with tempfile.TemporaryDirectory(prefix="mtplug-openmp-") as tmp:
        src = Path(tmp, "omp_test.c")
        src.write_text(OPENMP_TEST)
        try:
            # output_dir: distutils otherwise writes the object under the current directory
            objects = compiler.compile([str(src)], output_dir=tmp, extra_postargs=OPENMP_FLAGS)
            compiler.link_executable(objects, "omp_test", output_dir=tmp, extra_postargs=OPENMP_FLAGS)
        except (CCompilerError, DistutilsExecError):
            return False
    return True


def openmp_flags(environ=os.environ, compiler=None) -> list:
    """Compile and link flags for OpenMP: MTPLUG_OPENMP=0 → none, =1 → always, else a test compile."""
    choice = environ.get("MTPLUG_OPENMP", "")
    if choice == "0":
        return []
    if choice == "1" or compiles_with_openmp(compiler):
        return OPENMP_FLAGS
    print("mtplug: the C compiler cannot build OpenMP code (the error above); building the "
          "kernels without it, one thread each (MTPLUG_OPENMP=0 skips the test)", file=sys.stderr)
    return []


class BuildExt(build_ext):
    """build_ext whose copies into the source tree (``pip install -e .``) replace a module
    file by rename: rewriting a loaded shared object in place crashes every process that
    has it loaded (a test run during a rebuild died so)."""

    def copy_file(self, infile, outfile, *args, **kwargs):
        tmp = f"{outfile}.{os.getpid()}.tmp"
        try:
            _, copied = super().copy_file(infile, tmp, *args, **kwargs)
            os.replace(tmp, outfile)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return outfile, copied


def extensions() -> list:
    import numpy
    from Cython.Build import cythonize

    omp = openmp_flags()
    modules = [
        Extension(
            f"mtplug._ext.{pyx.stem}",
            [str(pyx.relative_to(HERE))],
            include_dirs=[numpy.get_include(), "pyx"],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            extra_compile_args=["-O3", *omp],
            extra_link_args=omp,
        )
        for pyx in sorted((HERE / "pyx").glob("*.pyx"))
    ]
    return cythonize(
        modules,
        include_path=["pyx"],
        compiler_directives=DIRECTIVES,
        # Debug and release C files live apart, so switching never reuses the wrong one.
        build_dir="build/cython-debug" if DEBUG else "build/cython",
        quiet=True,
    )


# setuptools runs this file as __main__; tests import it for the OpenMP test alone
if __name__ == "__main__":
    setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
