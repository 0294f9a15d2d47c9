#!/usr/bin/env bash
# The folder rule of docs/architecture.md: a library folder includes headers of
# its own folder and of folders before it in this order, never after it.
set -uo pipefail
cd "$(dirname "$0")/.."
order=(ir lexer grammar vm jit storage connectors ipc engine tools)
bad=0
for ((i = 0; i < ${#order[@]}; i++)); do
  d=${order[$i]}
  allowed=" ${order[*]:0:$((i + 1))} "
  while IFS=: read -r file line inc; do
    dep=${inc#*\"}; dep=${dep%%/*}
    if [[ "$allowed" != *" $dep "* ]]; then
      echo "$file:$line: $d/ includes $dep/ (only: ${allowed# })"
      bad=1
    fi
  done < <(grep -rnE '#include "(ir|lexer|grammar|vm|jit|storage|connectors|ipc|engine|tools)/' "$d" \
             --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.y' --include='*.re' --include='*.def')
done
[ $bad = 0 ] && echo "layering: every include goes to the same or an earlier folder"
exit $bad
