"""Run by the p4runtime-shell environment (.venv-shell), never imported by
our code: read a table from a device as a backup client (election id 1) and
print its entries as JSON lines {"match": [ints], "action": str, "params": [ints]}."""

import json
import sys

import p4runtime_sh.shell as sh

addr, device_id, table = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sh.setup(device_id=device_id, grpc_addr=addr, election_id=(0, 1), verbose=False)
try:
    for te in sh.TableEntry(table).read():
        msg = te.msg()
        print(json.dumps({
            "match": [int.from_bytes(m.exact.value, "big") for m in msg.match],
            "action": sh.context.get_name_from_id(msg.action.action.action_id),
            "params": [int.from_bytes(p.value, "big") for p in msg.action.action.params],
        }))
finally:
    sh.teardown()
