"""Training the agent on the EDGE dataset (paper Appendix I): GRPO and SFT, by a training engine (verl so far).

One scoring path for bench and training: a rollout is a bench episode (``bench.episode.run_episode``) on a
fresh gateway session in strict replay of the item's cassette bundle, and its reward comes from the bench
scorers (``bench.scoring``). A generation is read with ``models.toolcalls`` (the bench's and the agent endpoint's
reader and typing rule). An engine is used as a library, never forked.

What every engine uses:

* ``train.episode``      a rollout driven by any policy (conversation -> next assistant message), CPU-testable;
* ``train.tasks``        a dataset row -> the bench ``Task`` it was made from;
* ``train.reward``       ``compute_score``, the bench scorers on a rollout (verl's ``reward.custom_reward_function``);
* ``train.data_checks``  the checks before a launch: dataset rows -> tasks and bundles, the model folder, paths;
* ``train.runs``         run folders, ``<home>/train/runs/<recipe>-<UTC stamp>``;
* ``train.sft_export``   EDGE's ``sft.jsonl`` as parquet (JSON-string ``messages``/``tools`` columns);
* ``train.records``      the metadata DB's training runs and steps;
* ``train.policies``, ``train.tiny_model``, ``train.smoke``  scripted policies, the tiny random Qwen3, the GPU
  smoke run (``gpu_smoke.sh``).

The engines (``train.engines``: a registry saying what each needs and whether this machine has it):

* ``train.engines.verl``  recipes (``configs/``) composed against verl's own config dir and checked
  (``recipes``, ``check``), the verl command line and its step metrics (``launch``), verl's dataset classes
  (``dataset``, ``sft_data``);
* ``train.engines.verl.agent_loop`` verl's ``AgentLoopBase`` subclass (registered by ``engines/verl/configs/agent_loops.yaml``).

Nothing here imports verl or torch at package import: ``kopa --help`` stays fast and the CPU install
(without the ``verl`` extra) can still check configs and score trajectories.
"""

__all__: list[str] = []  # a namespace: import the modules themselves
