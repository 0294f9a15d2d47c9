# Shared by the shell tests: `check NAME CONDITION` counts a PASS or FAIL,
# `free_port` names a loopback port nobody listens on, `finish` prints the
# summary line and exits with its verdict.
pass=0 fail=0
check() { if eval "$2"; then echo "PASS $1"; pass=$((pass+1)); else echo "FAIL $1"; fail=$((fail+1)); fi; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" = 0 ]; exit; }
