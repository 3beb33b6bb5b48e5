#!/usr/bin/env bash
# Checks that the README's first app is Examples/FirstApp/main.swift, line for line: the ```swift
# block that follows the marker line
#     <!-- first-app: Examples/FirstApp/main.swift -->
# (blank lines between them allowed) must equal the file, so the app a newcomer copies is one that CI
# builds and runs. Usage: Examples/check-readme.sh [README] (default: the checkout's README.md).
set -euo pipefail
readme=$(realpath -- "${1:-$(dirname "$0")/../README.md}")
cd "$(dirname "$0")/.."
source_file=Examples/FirstApp/main.swift
marker="<!-- first-app: $source_file -->"

if [ ! -f "$readme" ]; then
  echo "check-readme: there is no file $readme." >&2
  exit 1
fi
if ! grep -qxF -- "$marker" "$readme"; then
  echo "check-readme: $readme has no line '$marker'." >&2
  echo "  Put it on the line before the \`\`\`swift block that shows the first app." >&2
  exit 1
fi

block=$(mktemp)
trap 'rm -f "$block"' EXIT
# state: 0 before the marker, 1 between the marker and the fence, 2 inside the block, 3 closed.
if ! awk -v marker="$marker" '
  state == 0 && $0 == marker { state = 1; next }
  state == 1 && /^[[:space:]]*$/ { next }
  state == 1 && /^```swift[[:space:]]*$/ { state = 2; next }
  state == 1 { exit }
  state == 2 && /^```[[:space:]]*$/ { state = 3; exit }
  state == 2 { print }
  END { if (state != 3) exit 1 }' "$readme" > "$block"; then
  echo "check-readme: in $readme, the marker '$marker' is not followed by a closed \`\`\`swift block." >&2
  exit 1
fi

if ! diff -u --label "$readme (the block after the marker)" --label "$source_file" "$block" "$source_file"; then
  echo "check-readme: the first app in $readme differs from $source_file (diff above)." >&2
  echo "  Paste $source_file into the \`\`\`swift block after '$marker', or change the file to match." >&2
  exit 1
fi
echo "check-readme: $readme shows $source_file as it is."

# docs/tour.md shows the files of Examples/Tour whole: each ```swift block after a line
#     <!-- tour: Examples/Tour/NAME.swift -->
# must equal that file, and every file of Examples/Tour must be shown.
tour_page=docs/tour.md
shown_files=$(grep -oE '^<!-- tour: Examples/Tour/[A-Za-z0-9_]+\.swift -->$' "$tour_page" | sed -E 's|<!-- tour: (.*) -->|\1|')
for file in $shown_files; do
  if ! awk -v marker="<!-- tour: $file -->" '
    state == 0 && $0 == marker { state = 1; next }
    state == 1 && /^```swift[[:space:]]*$/ { state = 2; next }
    state == 1 { exit 1 }
    state == 2 && /^```[[:space:]]*$/ { state = 3; exit }
    state == 2 { print }
    END { if (state != 3) exit 1 }' "$tour_page" > "$block"; then
    echo "check-readme: in $tour_page, '<!-- tour: $file -->' is not followed by a closed \`\`\`swift block." >&2
    exit 1
  fi
  if ! diff -u --label "$tour_page ($file)" --label "$file" "$block" "$file"; then
    echo "check-readme: $tour_page shows $file otherwise than it is (diff above)." >&2
    exit 1
  fi
done
for file in Examples/Tour/*.swift; do
  if ! printf '%s\n' $shown_files | grep -qxF -- "$file"; then
    echo "check-readme: $tour_page does not show $file." >&2
    exit 1
  fi
done
echo "check-readme: $tour_page shows the $(printf '%s\n' $shown_files | wc -l) files of Examples/Tour as they are."

# The package lines (the ```swift block after "<!-- package-lines -->") resolve against a checkout in a
# folder of another name: SwiftPM names a package found by path after its folder unless told.
lines=$(awk '
  state == 0 && $0 == "<!-- package-lines -->" { state = 1; next }
  state == 1 && /^```swift[[:space:]]*$/ { state = 2; next }
  state == 2 && /^```[[:space:]]*$/ { exit }
  state == 2 && !/^[[:space:]]*\/\// { print }' "$readme")
if [ -z "$lines" ]; then
  echo "check-readme: $readme has no \`\`\`swift block after '<!-- package-lines -->'." >&2
  exit 1
fi
scratch=$(mktemp -d)
trap 'rm -f "$block"; rm -rf "$scratch"' EXIT
ln -s "$PWD" "$scratch/tessera-checkout-of-another-name"
mkdir -p "$scratch/app/Sources/FirstApp"
cp "$source_file" "$scratch/app/Sources/FirstApp/main.swift"
{
  echo '// swift-tools-version:6.0'
  echo 'import PackageDescription'
  echo 'let package = Package(name: "ReadmeApp", platforms: [.macOS(.v15)],'
  echo "$lines" | sed -e 's|"\.\./Tessera"|"../tessera-checkout-of-another-name"|' -e 's|^\(.*\)\]$|\1],|'
  echo ')'
} > "$scratch/app/Package.swift"
if ! (cd "$scratch/app" && swift package describe > "$scratch/describe.txt" 2>&1); then
  echo "check-readme: the package lines in $readme do not resolve against a checkout named otherwise:" >&2
  cat "$scratch/describe.txt" "$scratch/app/Package.swift" >&2
  exit 1
fi
echo "check-readme: the package lines in $readme resolve whatever the checkout's folder is called."
