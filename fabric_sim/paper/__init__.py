"""The MRC paper's experiments (section 5.2) on the timed fabric: one
scenario file each in scenarios/paper/, what each measures against the
paper (failures.py: Figs. 9-11; paths.py: Figs. 12-14; roce_figs.py:
Figs. 16-18), the PNGs (figures.py) and the paper.md gallery
(gallery.py). `make paper` runs them all (python -m fabric_sim.paper);
docs/paper.md describes them."""

from fabric_sim.paper import failures, paths, roce_figs

# In the order `make paper` runs them: cheap ones first, so most figures come soonest.
ORDER = ("fig10", "fig11", "fig09a", "fig09b", "fig09d", "fig12", "fig14", "fig18", "fig16bw", "fig09c", "fig17",
         "fig16")
EXPERIMENTS = sorted(failures.EXPERIMENTS + paths.EXPERIMENTS + roce_figs.EXPERIMENTS, key=lambda e: ORDER.index(e.key))
BY_KEY = {e.key: e for e in EXPERIMENTS}
