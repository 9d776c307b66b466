"""Every experiment, in the order `make paper` runs them, and every claim
of the paper they hold. Kept out of the package's __init__ so that the
experiment modules, which import the package's metrics, are not imported
back by it."""

from mrc_paper import appendix, claims, failures, paths, roce_figs, sendrecv, table_qps

# In the order `make paper` runs them: cheap ones first, so most figures come soonest.
ORDER = ("tab521", "fig10", "fig11", "fig09a", "fig09b", "fig09d", "fig12", "fig14", "fig18", "fig20", "fig16bw",
         "roceqp", "fig19a", "fig19b", "fig19c", "fig09c", "fig15", "fig17", "fig16")
EXPERIMENTS = sorted(failures.EXPERIMENTS + paths.EXPERIMENTS + roce_figs.EXPERIMENTS + table_qps.EXPERIMENTS
                     + appendix.EXPERIMENTS + sendrecv.EXPERIMENTS,
                     key=lambda e: ORDER.index(e.key))
BY_KEY = {e.key: e for e in EXPERIMENTS}
CLAIMS = claims.check(failures.CLAIMS + paths.CLAIMS + roce_figs.CLAIMS + table_qps.CLAIMS + appendix.CLAIMS
                      + sendrecv.CLAIMS)
for _c in CLAIMS.values():
    if _c.experiment not in BY_KEY:
        raise ValueError(f"claim {_c.id}: no experiment {_c.experiment}")
