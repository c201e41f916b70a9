"""An optimizer class's ``options`` is its option table (what ``mtplug optimize ALGO`` and
the docs are built from): an instance keeps it, and an option it does not have is refused."""

from __future__ import annotations

import pytest

from mtplug.optimizers.registry import OPTIMIZER_NAMES, get_optimizer


@pytest.mark.parametrize("name", sorted(OPTIMIZER_NAMES))
def test_an_instance_keeps_the_class_option_table(name):
    cls = get_optimizer(name)
    assert cls().options is cls.options


@pytest.mark.parametrize("name", sorted(OPTIMIZER_NAMES))
def test_an_unknown_option_is_refused(name):
    # `none` used to take any keyword silently (the base class stored them)
    with pytest.raises(TypeError, match=r"no_such_option|takes no arguments"):
        get_optimizer(name)(no_such_option=1)
