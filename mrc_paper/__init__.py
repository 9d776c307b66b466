"""The MRC paper's experiments (section 5.2) on the timed fabric: one
scenario file each in scenarios/paper/, what each measures against the
paper (failures.py: Figs. 9-11; paths.py: Figs. 12-14; roce_figs.py:
Figs. 16-18), the PNGs (figures.py) and the paper.md gallery
(gallery.py). `make paper` runs them all (python -m mrc_paper);
docs/paper.md describes them."""
