"""ev_slots kept beside slot_ev (control_plane/ev_control.py): the writes
that take a health QP's slots from one rotation to the next."""

from control_plane.ev_control import ev_slot_updates


def test_a_rewrite_moves_the_slot_bit_from_the_old_ev_to_the_new():
    before, after = [10, 11, 10, 12], [10, 11, 13, 12]
    ups = ev_slot_updates(4, before, after)
    got = {(u._update_type.name, u.match["ev"]): u.action.args["slots"] if u.action else None
           for u in ups}
    assert got == {("MODIFY", 10): 0b0001, ("INSERT", 13): 0b0100}


def test_an_ev_no_slot_holds_is_deleted():
    ups = ev_slot_updates(4, [10, 11], [10, 10])
    assert {(u._update_type.name, u.match["ev"]) for u in ups} == {("DELETE", 11), ("MODIFY", 10)}


def test_no_change_writes_nothing():
    assert ev_slot_updates(4, [10, 11], [10, 11]) == []
