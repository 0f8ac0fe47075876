#!/bin/sh
# Quality gate: every section the plan names must exist and export a component.
status=0
for f in HeroSection FeaturesSection CtaSection; do
  path="src/sections/$f.tsx"
  if [ ! -f "$path" ]; then
    echo "missing $path"
    status=1
  elif ! grep -q "export" "$path"; then
    echo "$path exports nothing"
    status=1
  fi
done
[ $status -eq 0 ] && echo "all sections present"
exit $status
