"""mtplug: tune the feature weights of SMT systems; a drop-in for Moses and cdec tuning tools."""

__version__ = "0.1.0"
