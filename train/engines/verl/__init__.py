"""verl (0.9.1, used as a library, never forked): what only this engine needs.

* ``train.engines.verl.recipes``   the recipes (``configs/*.yaml``): Hydra overrides composed against verl's own
  config dir;
* ``train.engines.verl.check``     what verl would only find at run time: batch sizes, lengths, the multi-turn
  loop settings (plus the checks every engine makes, ``train.data_checks``);
* ``train.engines.verl.launch``    the verl command line and environment, and its step metrics streamed from verl's
  file logger into ``metrics.jsonl``;
* ``train.engines.verl.dataset``   ``RLHFDataset`` over EDGE's parquet (``data.custom_cls`` of the GRPO recipes);
* ``train.engines.verl.sft_data``  ``MultiTurnSFTDataset`` over EDGE's SFT conversations (of the ``sft`` recipe);
* ``configs/agent_loops.yaml``     the agent loop registration (``train.engines.verl.agent_loop``).

Nothing here imports verl, torch or Ray at package import; ``dataset`` and ``sft_data`` import verl (verl loads them
by their path, from the recipes).
"""

__all__: list[str] = []  # a namespace: import the modules themselves
