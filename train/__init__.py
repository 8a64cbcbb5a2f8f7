"""Training the agent on the EDGE dataset with verl (paper Appendix I): GRPO and SFT.

One scoring path for bench and training: a rollout is a bench episode (``bench.episode.run_episode``) on a
fresh gateway session in strict replay of the item's cassette bundle, and its reward comes from the bench
scorers (``bench.scoring``). A generation is read with ``models.toolcalls`` (the bench's and the agent endpoint's
reader and typing rule). verl is used as a library, never forked:

* ``train.episode``     a rollout driven by any policy (conversation -> next assistant message), CPU-testable;
* ``train.tasks``       a dataset row -> the bench ``Task`` it was made from;
* ``train.reward``      ``compute_score`` for ``reward.custom_reward_function`` (the bench scorers);
* ``train.agent_loop``  the verl ``AgentLoopBase`` subclass (registered by ``configs/agent_loops.yaml``);
* ``train.dataset``     verl's ``RLHFDataset`` reading EDGE's parquet (JSON-string columns decoded);
* ``train.check``       a config composed against verl's own config dir, with our checks;
* ``train.launch``      the verl command line, and its step metrics streamed to JSONL and the metadata DB.

Nothing here imports verl or torch at package import: ``kopa --help`` stays fast and the CPU install
(without the ``verl`` extra) can still check configs and score trajectories.
"""

__all__: list[str] = []  # a namespace: import the modules themselves
