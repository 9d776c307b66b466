"""The example traces of scenarios/chakra/, written by the project's writer
(no recorded trace needed): `python -m fabric_sim.scenario.chakra.examples
[FOLDER]` rewrites them (default scenarios/chakra/traces/);
tests/sim/test_chakra_examples.py holds the committed files to what this
writes.

- `dp`: a data-parallel step. Forward, then the backward layer by layer
  from the last; each layer's gradients are a bucket, all-reduced over
  every rank as soon as its backward ends, beside the backward of the
  layers before it (PyTorch DDP's overlap); the optimizer once every
  bucket is reduced.
- `tp_dp`: tensor and data parallel. Groups of TP ranks split each layer:
  forward all-gathers the layer's input within the group, backward
  reduce-scatters its gradient within the group (Megatron's sequence
  parallelism); each layer's weight gradients are all-reduced across the
  DP group (the ranks at the same place in every TP group), beside the
  backward of the layers before it."""

from __future__ import annotations

import sys
from pathlib import Path

from fabric_sim.scenario.chakra.trace import Coll
from fabric_sim.scenario.chakra.writer import Rank, write

OUT = Path(__file__).resolve().parents[3] / "scenarios" / "chakra" / "traces"
DP = {"ranks": 8, "layers": 4, "forward_us": 40, "backward_us": 60, "bucket_bytes": 4 << 20, "optimizer_us": 20}
TP_DP = {"tp": 4, "dp": 2, "layers": 3, "forward_us": 40, "backward_us": 70, "activation_bytes": 1 << 20,
         "grad_bytes": 4 << 20, "optimizer_us": 20}


def data_parallel(ranks: int, layers: int, forward_us: int, backward_us: int, bucket_bytes: int,
                  optimizer_us: int) -> list[Rank]:
    out = []
    for _ in range(ranks):
        k = Rank()
        prev = [k.compute(f"fwd_{i}", forward_us, [] if i == 0 else [i - 1]) for i in range(layers)][-1:]
        buckets = []
        for i in reversed(range(layers)):
            prev = [k.compute(f"bwd_{i}", backward_us, prev)]
            buckets.append(k.collective(f"allreduce_grad_{i}", Coll.ALL_REDUCE, bucket_bytes, prev))
        k.compute("optimizer", optimizer_us, [*prev, *buckets])
        out.append(k)
    return out


def tensor_data_parallel(tp: int, dp: int, layers: int, forward_us: int, backward_us: int, activation_bytes: int,
                         grad_bytes: int, optimizer_us: int) -> tuple[list[Rank], dict[str, list[int]]]:
    """Rank r is TP rank r % tp of TP group r // tp; its DP group holds the ranks r % tp + j tp."""
    groups = {f"tp{g}": [g * tp + i for i in range(tp)] for g in range(dp)}
    groups |= {f"dp{i}": [g * tp + i for g in range(dp)] for i in range(tp)}
    out = []
    for r in range(tp * dp):
        k, tpg, dpg = Rank(), f"tp{r // tp}", f"dp{r % tp}"
        prev: list[int] = []
        for i in range(layers):
            ag = k.collective(f"allgather_act_{i}", Coll.ALL_GATHER, activation_bytes // tp, prev, group=tpg)
            prev = [k.compute(f"fwd_{i}", forward_us, [ag])]
        grads = []
        for i in reversed(range(layers)):
            b = k.compute(f"bwd_{i}", backward_us, prev)
            prev = [k.collective(f"reducescatter_grad_{i}", Coll.REDUCE_SCATTER, activation_bytes, [b], group=tpg)]
            grads.append(k.collective(f"allreduce_wgrad_{i}", Coll.ALL_REDUCE, grad_bytes // tp, [b], group=dpg))
        k.compute("optimizer", optimizer_us, [*prev, *grads])
        out.append(k)
    return out, groups


def main(out: Path = OUT) -> int:
    for p in write(out / "dp", data_parallel(**DP)):
        print(f"wrote {p}")
    ranks, groups = tensor_data_parallel(**TP_DP)
    for p in write(out / "tp_dp", ranks, groups):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
