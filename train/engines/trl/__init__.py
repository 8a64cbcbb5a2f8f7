"""TRL + PEFT (LoRA) training on the CPU or one GPU: what only this engine needs.

* ``train.engines.trl.model``  which model a run starts from (``--model``: nothing = the packaged SmolLM2 as
  ``models.checkpoints.base_checkpoint``, a Hugging Face folder, a LoRA adapter folder, or an earlier run folder),
  loaded with a fresh or continued LoRA adapter;
* ``train.engines.trl.sft``    ``run_sft``: TRL's ``SFTTrainer`` over EDGE's ``sft.jsonl``, the loss on assistant
  turns only, a run folder ``<home>/train/runs/sft-trl-<stamp>`` holding ``checkpoint/`` (the adapter, the
  tokenizer, ``kopa-checkpoint.json``) and ``metrics.jsonl``;
* ``train.engines.trl.grpo``   ``run_grpo``: TRL's ``GRPOTrainer`` whose rollouts (``rollout_func``) are the bench's
  own episodes (``train.episode``) played by the model being trained, tool-result tokens masked, the bench's
  verdict as the reward; a run folder ``<home>/train/runs/grpo-trl-<stamp>`` like SFT's;
* ``train.engines.trl.tokens`` a tokenizer's chat template as the agent step's ``TokenCodec`` (``ChatTemplateTokens``:
  an episode as the model's own token ids, for GRPO rollouts);
* ``train.engines.trl.gpu_check`` one short SFT run and a few GRPO steps on a CUDA GPU, with step times and
  tokens/s (``python -m train.engines.trl.gpu_check``).

Nothing here imports torch, transformers, trl or peft at package import.
"""

__all__: list[str] = []  # a namespace: import the modules themselves
