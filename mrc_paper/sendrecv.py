"""Fig. 15 of the MRC paper: NCCL sendrecv over MRC, bandwidth per NIC
against message size (Cluster B's NICs, scaled in ranks and sizes)."""

from __future__ import annotations

from mrc_paper import metrics as M
from mrc_paper.claims import Claim
from mrc_paper.experiments import Experiment, Finding, Runs, Scale

PAPER_GBYTES = 92  # GB/s per NIC at its largest sizes, of 100 (8 x 100 Gb/s)
SHARE = 0.9  # the largest size's bus bandwidth, of the NIC's rate: the paper's 92 GB/s of 100


CLAIMS = [
    Claim("fig15.share", "fig15", "Fig. 15", "NCCL over MRC reaches up to 92 GB/s per NIC (of 100) at its largest "
          "sizes", "the largest size's bus bandwidth, of the NIC's rate", f"at least {SHARE}",
          "spraying over the planes and their paths",
          indistinct="one flow per NIC pair on an otherwise idle fabric: a single path per QP on one plane of "
                     "eight would show the same ceiling per plane, and the NIC link is the bottleneck either way"),
]


def fig15(runs: Runs) -> Finding:
    f = Finding("fig15")
    pts = sorted((v["workload.message_bytes"], r) for v, r in runs.by_transport("mrc"))
    for s, r in pts:
        f.delivered(f"mrc {s >> 10} KiB", M.delivered_once(r))
    gbps = {s: M.collective_gbps(r) for s, r in pts}
    f.numbers["gbps"] = {str(s): g for s, g in gbps.items()}
    f.row("bus bandwidth per NIC by size (Gb/s)", "rises with size to 92 GB/s (736 Gb/s) at 1-2 GiB",
          ", ".join(f"{s / 2**20:g} MiB: {g:.0f}" for s, g in gbps.items()))
    big, r = pts[-1]
    line = r.nic_gbps
    f.hold("fig15.share", f"{gbps[big] / line:.2f} at {big / 2**20:g} MiB (paper: {PAPER_GBYTES / 100:.2f})",
           gbps[big] >= SHARE * line, "the largest size run stays below the NIC's rate: per-message latency "
           "still shows at this size")
    f.numbers.update(line=line, largest=big)
    return f


FIG15_PAPER = ("NCCL over MRC reaches up to 92 GB/s per NIC (of 100) for large messages at 42K GPUs; bandwidth grows "
               "with message size.")

EXPERIMENTS = [
    Experiment("fig15", "fig15", "NCCL sendrecv over MRC (Cluster B, 8 ranks)", "fig15.yaml",
               FIG15_PAPER, fig15, at="8 ranks"),
]

# make paper SCALE=paper: Cluster B at 64 NICs, beside the quick gallery's 8.
AT_SCALE = [
    Experiment("fig15_64", "fig15", "NCCL sendrecv over MRC (Cluster B, 64 ranks)", "scale/fig15.yaml",
               FIG15_PAPER, fig15, Scale.PAPER, "64 ranks"),
]
