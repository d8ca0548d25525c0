"""The ``ssa-lm`` model for EleutherAI's lm-evaluation-harness (lm-eval 0.4).

Python::

    import lm_eval
    import ssa_book.lm.lm_eval_adapter  # registers "ssa-lm"
    lm_eval.simple_evaluate(model="ssa-lm", model_args="pretrained=RUN/checkpoint", tasks=["hellaswag"])

Command line (lm-eval 0.4 discovers models only inside its own package, so the bare ``lm_eval``
script cannot see ours): lm-eval's ``run`` through :mod:`ssa_book.lm.cli`, which checks each of its
arguments (lm-eval's names) before any task is read::

    python -m ssa_book decoder lm-eval --model ssa-lm --model_args pretrained=RUN/checkpoint,device=cuda --tasks hellaswag

Checkpoints load through :func:`ssa.hf.from_pretrained` (:func:`ssa_book.lm.model.load_checkpoint`),
so the scorer recorded in the checkpoint, SSA with its learned ``b`` and ``n``, is the one
evaluated; a plain ``AutoModelForCausalLM`` load would silently fall back to softmax.
"""

from __future__ import annotations

import torch
from lm_eval.api.model import TemplateLM
from lm_eval.api.registry import register_model
from lm_eval.utils import get_rolling_token_windows, make_disjoint_window
from ssa_book.lm.model import load_checkpoint
from ssa_book.profiles import resolve_device

MODEL_NAME = "ssa-lm"


@register_model(MODEL_NAME)
class SSALanguageModel(TemplateLM):
    """lm-eval model for checkpoints written by ``python -m ssa_book decoder train``."""

    def __init__(
        self,
        pretrained: str,
        device: str = "auto",
        batch_size: int | str = 16,
        max_length: int | None = None,
        max_gen_toks: int = 256,
        **_ignored,
    ):

        super().__init__()
        kind = resolve_device(str(device).split(":")[0])  # a clear error when the device is absent
        self._device = torch.device(str(device) if str(device).startswith(kind) else kind)
        self.model, self.tokenizer = load_checkpoint(pretrained, device=self._device)
        positions = self.model.config.max_position_embeddings
        self.max_length = int(max_length or positions)
        if self.max_length > positions:
            raise ValueError(
                f"max_length: {self.max_length} exceeds the model's {positions} positions; use max_length <= {positions}"
            )
        self.batch_size = int(batch_size) if str(batch_size) != "auto" else 16
        self.max_gen_toks = int(max_gen_toks)

    @property
    def eot_token_id(self) -> int:
        return self.tokenizer.eos_token_id

    def tok_encode(self, string: str, add_special_tokens: bool | None = None, **kwargs) -> list[int]:
        return self.tokenizer(string, add_special_tokens=False)["input_ids"]

    def tok_decode(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(tokens)

    def _score(self, pairs: list[tuple[list[int], list[int]]]) -> list[tuple[float, bool]]:
        """``(log p(continuation | context), whether greedy decoding gives the continuation)``."""
        results: list[tuple[float, bool]] = []
        for start in range(0, len(pairs), self.batch_size):
            rows = []
            for context, continuation in pairs[start : start + self.batch_size]:
                continuation = continuation[-self.max_length :]
                whole = (context + continuation)[-(self.max_length + 1) :]
                rows.append((whole[:-1], continuation))
            longest = max(len(inputs) for inputs, _ in rows)
            ids = torch.full((len(rows), longest), self.eot_token_id, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, (inputs, _) in enumerate(rows):  # right padding keeps every position
                ids[row, : len(inputs)] = torch.tensor(inputs)
                mask[row, : len(inputs)] = 1
            with torch.no_grad():
                logits = (
                    self.model(input_ids=ids.to(self._device), attention_mask=mask.to(self._device))
                    .logits.float()
                    .cpu()
                )
            for row, (inputs, continuation) in enumerate(rows):
                end = len(inputs)
                log_probs = torch.log_softmax(
                    logits[row, end - len(continuation) : end], dim=-1
                )  # (continuation, vocab)
                target = torch.tensor(continuation)
                total = float(log_probs.gather(-1, target[:, None]).sum())
                results.append((total, bool((log_probs.argmax(-1) == target).all())))
        return results

    def _loglikelihood_tokens(self, requests, disable_tqdm: bool = False, **kwargs) -> list[tuple[float, bool]]:
        return self._score([(context, continuation) for _, context, continuation in requests])

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
        """Whole-document log-likelihood, in disjoint windows of at most ``max_length`` tokens."""
        totals = []
        for (text,) in (request.args for request in requests):
            windows = [
                make_disjoint_window(window)
                for window in get_rolling_token_windows(
                    self.tok_encode(text), self.prefix_token_id, self.max_length, context_len=1
                )
            ]
            totals.append(sum(score for score, _ in self._score(windows)))
        return totals

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        """Greedy continuation, cut at the first of the request's ``until`` strings."""
        outputs = []
        for context, options in (request.args for request in requests):
            until = options.get("until") or [self.tok_decode([self.eot_token_id])]
            until = [until] if isinstance(until, str) else list(until)
            new_tokens = int(options.get("max_gen_toks", self.max_gen_toks))
            room = max(1, self.max_length - new_tokens)
            new_tokens = min(new_tokens, self.max_length - 1)
            prompt = torch.tensor([self.tok_encode(context)[-room:] or [self.eot_token_id]], device=self._device)
            with torch.no_grad():
                generated = self.model.generate(
                    prompt,
                    attention_mask=torch.ones_like(prompt),
                    max_new_tokens=new_tokens,
                    do_sample=False,
                    pad_token_id=self.eot_token_id,
                )
            text = self.tok_decode(generated[0, prompt.shape[1] :].tolist())
            for stop in until:
                text = text.split(stop)[0] if stop else text
            outputs.append(text)
        return outputs
