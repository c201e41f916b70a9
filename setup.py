"""Build the Cython kernels in pyx/ as mtplug._ext.<name>.

This is the one place that sets Cython directives. MTPLUG_CYTHON_DEBUG=1 turns bounds
checking, wraparound and initialisation checks back on (CI runs the tests once more so).
"""
import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

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

extensions = [
    Extension(
        f"mtplug._ext.{pyx.stem}",
        [str(pyx.relative_to(HERE))],
        include_dirs=[numpy.get_include(), "pyx"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # OpenMP: kernels that loop over sentences run them in parallel (prange)
        extra_compile_args=["-O3", "-fopenmp"],
        extra_link_args=["-fopenmp"],
    )
    for pyx in sorted((HERE / "pyx").glob("*.pyx"))
]

setup(
    ext_modules=cythonize(
        extensions,
        include_path=["pyx"],
        compiler_directives=DIRECTIVES,
        # Debug and release C files live apart, so switching never reuses the wrong one.
        build_dir="build/cython-debug" if DEBUG else "build/cython",
        quiet=True,
    ),
)
