"""The output bins and lattice transition matrices of TraCS-C's two axes on a prior's cells."""

import numpy as np

from tracs.estimate.grid_density import axis_mechanisms
from tracs.estimate.transition import output_grid, snap_edges, transition_matrix


def axis_tables(pert, prior):
    """``(ox, oy, ax, ay)``: the output bins and transition matrices of both axes on the prior's cells."""
    xe, ye = prior.grid
    mx, my = axis_mechanisms(pert, pert.epsilon)
    ox, oy = output_grid(xe, None), output_grid(ye, None)
    ox[0], ox[-1], oy[0], oy[-1] = -np.inf, np.inf, -np.inf, np.inf
    ox, oy = snap_edges(mx, ox), snap_edges(my, oy)
    return ox, oy, transition_matrix(mx, xe, ox), transition_matrix(my, ye, oy)
