"""Every experiment, in the order `make paper` runs them, and every claim
of the paper they hold. Kept out of the package's __init__ so that the
experiment modules, which import the package's metrics, are not imported
back by it."""

from mrc_paper import appendix, claims, failures, paths, roce_figs, sendrecv, table_qps
from mrc_paper.experiments import Experiment, Scale

# In the order `make paper` runs them: cheap ones first, so most figures come soonest.
ORDER = ("tab521", "fig10", "fig11", "fig09a", "fig09b", "fig09d", "fig12", "fig14", "fig18", "fig20", "fig16bw",
         "roceqp", "fig19a", "fig19b", "fig19c", "fig09c", "fig15", "fig17", "fig16", "fig15_64", "fig16_64",
         "fig17_64")
EXPERIMENTS = sorted(failures.EXPERIMENTS + paths.EXPERIMENTS + roce_figs.EXPERIMENTS + table_qps.EXPERIMENTS
                     + appendix.EXPERIMENTS + sendrecv.EXPERIMENTS + roce_figs.AT_SCALE + sendrecv.AT_SCALE,
                     key=lambda e: ORDER.index(e.key))
BY_KEY = {e.key: e for e in EXPERIMENTS}
CLAIMS = claims.check(failures.CLAIMS + paths.CLAIMS + roce_figs.CLAIMS + table_qps.CLAIMS + appendix.CLAIMS
                      + sendrecv.CLAIMS)
for _c in CLAIMS.values():
    if _c.experiment not in BY_KEY:
        raise ValueError(f"claim {_c.id}: no experiment {_c.experiment}")


def at(scale: Scale) -> list[Experiment]:
    """The experiments of the gallery at `scale`: the quick one's, and at
    the paper's scale those and the larger runs beside them."""
    return [e for e in EXPERIMENTS if e.scale <= scale]
