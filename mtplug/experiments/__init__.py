"""Experiments over tuned systems: reranking n-best lists, held-out evaluation with
MultEval's statistics (bootstrap, stratified approximate randomization), and optimizer
studies over seeds and start points (``mtplug rerank``, ``evaluate``, ``compare``)."""
