"""Seed 002 on its own ground (docs/network.md): the emulated Ethernet cluster (cluster.py), the
launch of latscope-net across it (launch.py), and the LogP parameters, the barrier rows' costs
and the predicted-against-measured comparison (model.py)."""
