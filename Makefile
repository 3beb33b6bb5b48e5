# Tessera: the two commands a person needs.
#   make gallery   install what is missing, build, run the gallery (headless when there is no display)
#   make test      install what is missing, build, run the tests offscreen (SDL's dummy video driver)
#   make stress    the seeded stress models, 10^6 operations each: the display pipeline's (4 mutator
#                  threads, on the UI thread and across the compositor thread) and input across the
#                  compositor thread (wheel, presses, drags, scrolls from code, overlays, stalls)
#   make tsan      the whole test suite under ThreadSanitizer; fails on any report or failure
#   make fuzz      the image decoders' seeded mutation fuzzer, FUZZ_SECONDS long (default 600)
#   make docs      the DocC documentation (Tessera, NodeRuntime, Compositor) in one archive under .build/
#   make examples  the example apps (Examples/): the README's first app is the file, they build, the
#                  feed's tests pass, and both run headless and write a screenshot
#   make release   every product built with optimization (what an app ships)
#   make soak      the gallery in a window under Xvfb, driven by seeded random input from outside for
#                  SOAK_WARMUP minutes (3) and then SOAK_MINUTES (default 30): RSS after the warm-up,
#                  at the middle and at the end, frames, errors, cost at rest
#   make asan      the whole test suite under AddressSanitizer with leak detection; fails on any report
SHELL := /bin/bash

RUNTIME_PACKAGES := libsdl2-dev libsdl2-ttf-dev libsdl2-image-dev libjpeg62-turbo-dev libpng-dev libwebp-dev libgif-dev liblcms2-dev libicu-dev libfontconfig-dev libharfbuzz-dev libdbus-1-dev libcurl4-openssl-dev libssl-dev libnghttp2-dev zlib1g-dev fonts-noto-color-emoji fonts-wqy-microhei fonts-lohit-deva fonts-tlwg-loma-ttf
# The AT-SPI test drives an app from outside as a screen reader would: a session bus (dbus-run-session),
# the accessibility bus and registry (at-spi2-core) and Python's pyatspi.
# Tools/input-latency.py measures input latency from outside (XTest in, X DAMAGE out) with python3-xlib.
# LoopbackServerTests speak HTTP/2 and TLS to the server through curl.
# The Wayland window tests run the gallery under headless sway (wlroots' headless backend; grim takes
# its screenshots), headless weston (a compositor with no seat) and weston's X11 backend inside Xvfb
# (a seat, and no server-side decorations: xwd reads its output); SDL loads libwayland-client and,
# for client-side decorations, libdecor with its cairo plugin. The input method tests speak fcitx5's
# D-Bus API from a scripted input method (python3-dbus, python3-gi) and type through the real fcitx5.
# Under sway a scripted Wayland input method (C, built by its test: wayland-scanner from libwayland-bin,
# gcc, libwayland-dev and libxkbcommon-dev for its virtual keyboard's keymap) composes into the gallery.
TEST_PACKAGES := $(RUNTIME_PACKAGES) xvfb xdotool x11-apps unicode-data webp dbus-bin dbus-daemon at-spi2-core python3-pyatspi python3-xlib python3-dbus python3-gi fcitx5 curl openbox xclip x11-xserver-utils sway grim weston libwayland-client0 libdecor-0-0 libdecor-0-plugin-1-cairo libwayland-bin libwayland-dev libxkbcommon-dev gcc
# Arguments passed to the gallery, e.g. make gallery ARGS="--frames 300".
ARGS ?=

FUZZ_SECONDS ?= 600
SOAK_MINUTES ?= 30
SOAK_WARMUP ?= 3
SOAK_SEED ?= $(shell date +%s)
FUZZ_SEED ?= $(shell date +%s)
STRESS_OPERATIONS ?= 1000000
STRESS_THREADS ?= 4

# The README whose "Your first app" block must be Examples/FirstApp/main.swift (a draft can be checked
# with make examples FIRST_APP_README=draft.md).
FIRST_APP_README ?= README.md
# Where the example apps' headless screenshots go.
EXAMPLES_OUTPUT := .test-output/examples

.PHONY: gallery test stress tsan asan fuzz docs examples build release soak deps test-deps clean portal-smoke

# Installs the Debian packages named in $(1) that are missing: with apt when running as root,
# otherwise prints the one command to run and stops.
define ensure_packages
	@missing=""; \
	for package in $(1); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "Installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	  else \
	    echo "Missing packages:$$missing"; \
	    echo "Run: sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi
endef

deps:
	$(call ensure_packages,$(RUNTIME_PACKAGES))

test-deps:
	$(call ensure_packages,$(TEST_PACKAGES))

# The desktop portals against Debian's real xdg-desktop-portal and its GTK backend, on a bus and an
# Xvfb of their own: links, files and notifications (Tools/portal-smoke.sh), then the appearance
# followed from gsettings (Tools/settings-portal-smoke.sh); not part of `make test`.
PORTAL_SMOKE_PACKAGES := $(TEST_PACKAGES) xdg-desktop-portal xdg-desktop-portal-gtk libglib2.0-bin dconf-service dconf-cli gsettings-desktop-schemas
portal-smoke:
	$(call ensure_packages,$(PORTAL_SMOKE_PACKAGES))
	swift build --build-tests
	Tools/portal-smoke.sh
	Tools/settings-portal-smoke.sh

build: deps
	swift build -c release --product gallery

gallery: build
	.build/release/gallery $(ARGS)

release: deps
	swift build -c release

# The report (JSON) goes to .test-output/soak.json; replay a run with make soak SOAK_SEED=N.
soak: test-deps build
	@mkdir -p .test-output
	/usr/bin/python3 Tools/soak.py --gallery .build/release/gallery --minutes $(SOAK_MINUTES) \
	  --warmup-minutes $(SOAK_WARMUP) --seed $(SOAK_SEED) \
	  --json .test-output/soak.json

# A crash or a hang leaves its input in .build/fuzz-findings; replay it with
# .build/release/image-fuzz --replay .build/fuzz-findings/crash-input, then keep it in
# Tests/NodeRuntimeTests/FuzzRegressions, whose files every `make test` decodes.
fuzz: deps
	swift build -c release --product image-fuzz
	.build/release/image-fuzz --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED)

test: test-deps
	SDL_VIDEODRIVER=dummy timeout 30m swift test

# Replay a seed with: make stress TESSERA_STRESS_SEED=0x1234ABCD
stress: test-deps
	SDL_VIDEODRIVER=dummy TESSERA_STRESS_OPERATIONS=$(STRESS_OPERATIONS) TESSERA_STRESS_THREADS=$(STRESS_THREADS) \
	  timeout 40m swift test --filter 'DisplayStressModelTests/testRandomSeed|InteractionStressTests'

# Its own scratch folder, so the sanitized build never mixes with the plain one. ThreadSanitizer's
# exit code alone is not trusted to survive the test runner: its report text fails the step too.
tsan: test-deps
	swift build --build-tests --sanitize=thread --scratch-path .build-tsan
	@set -o pipefail; SDL_VIDEODRIVER=dummy TSAN_OPTIONS="halt_on_error=0 exitcode=66" timeout 30m \
	  swift test --skip-build --sanitize=thread --scratch-path .build-tsan 2>&1 | tee .build-tsan/tsan.log
	@if grep -q "WARNING: ThreadSanitizer" .build-tsan/tsan.log; then \
	  echo "ThreadSanitizer reported races (see .build-tsan/tsan.log)"; exit 1; \
	fi
	@summary=$$(grep -E "Executed [0-9]+ tests?, with ([0-9]+ tests? skipped and )?[0-9]+ failures?" .build-tsan/tsan.log | tail -1); \
	  total=$$(echo "$$summary" | sed -E 's/.*Executed ([0-9]+) tests?.*/\1/'); \
	  skipped=$$(echo "$$summary" | sed -E 's/.*with ([0-9]+) tests? skipped.*/\1/;t;s/.*/0/'); \
	  failed=$$(echo "$$summary" | sed -E 's/.*[ ,]([0-9]+) failures?.*/\1/'); \
	  echo "ThreadSanitizer: no reports"; \
	  echo "tsan: $$((total - skipped - failed)) passed, $$skipped skipped, $$failed failed"

# AddressSanitizer with LeakSanitizer, its own scratch folder like tsan's. Tools/lsan-suppressions.txt
# names what LeakSanitizer cannot see as live (Swift's weak-reference side tables). Any report fails,
# from the test process or a child it starts. ASAN_LEAKS=0 checks memory errors only (what CI runs
# while the leak reports listed in docs/testing.md are worked through).
ASAN_LEAKS ?= 1
asan: test-deps
	swift build --build-tests --sanitize=address --scratch-path .build-asan
	@set -o pipefail; SDL_VIDEODRIVER=dummy ASAN_OPTIONS="detect_leaks=$(ASAN_LEAKS):halt_on_error=0:exitcode=66" \
	  LSAN_OPTIONS="suppressions=$(CURDIR)/Tools/lsan-suppressions.txt:print_suppressions=0" timeout 30m \
	  swift test --skip-build --sanitize=address --scratch-path .build-asan 2>&1 | tee .build-asan/asan.log
	@if grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)" .build-asan/asan.log; then \
	  echo "AddressSanitizer reported (see .build-asan/asan.log)"; exit 1; \
	fi
	@echo "AddressSanitizer: no reports"

# Each target's symbols in its own archive, the Tessera catalog's links reaching the other two (written
# ``/NodeRuntime/Node``), merged into .build/plugins/Swift-DocC/outputs/Tessera.doccarchive. Fails on any
# DocC warning located in the catalog (Sources/Tessera/Tessera.docc): a symbol link that does not resolve
# is one. Warnings from the sources' doc comments are printed but do not fail the target.
# DOCS_OUTPUT=folder writes the reference there instead, as a site for static hosting (outside the
# checkout too): serve the folder (python3 -m http.server -d folder) and open /documentation/tessera/.
DOCS_LOG := .build/docs.log
DOCS_OUTPUT ?=
DOCS_STATIC := $(if $(DOCS_OUTPUT),--transform-for-static-hosting --output-path "$(abspath $(DOCS_OUTPUT))",)
docs: deps
	@mkdir -p .build
	@set -o pipefail; swift package --disable-sandbox generate-documentation \
	  --enable-experimental-combined-documentation --target Compositor --target NodeRuntime --target Tessera \
	  $(DOCS_STATIC) --ide-console-output 2>&1 | tee $(DOCS_LOG)
	@if grep -E "Tessera\.docc/[^:]+:[0-9]+:[0-9]+: (warning|error):" $(DOCS_LOG); then \
	  echo "make docs: the catalog above has warnings (Sources/Tessera/Tessera.docc)"; exit 1; \
	fi
	@echo "docs: $$(grep -cE ': (warning|error):' $(DOCS_LOG)) warnings in all, none in the catalog"
# Examples/ is its own package on Tessera by path, built in Examples/.build: what an app outside this
# repository sees. Each app runs headless to its settled first screen, must exit 0 and write a PNG.
examples: test-deps
	Examples/check-readme.sh $(FIRST_APP_README)
	swift build --package-path Examples
	SDL_VIDEODRIVER=dummy timeout 10m swift test --package-path Examples
	@bin=$$(swift build --package-path Examples --show-bin-path); \
	if readelf -d "$$bin/FirstApp" | grep -q 'libFoundation\.so'; then \
	  echo "examples: FirstApp links libFoundation.so: the runtime's modules must import FoundationEssentials, not Foundation"; exit 1; fi; \
	echo "examples: FirstApp does not link Foundation"
	@bin=$$(swift build --package-path Examples --show-bin-path); rm -rf $(EXAMPLES_OUTPUT); \
	for app in FirstApp PhotoFeed Tour; do \
	  shot=$(EXAMPLES_OUTPUT)/$$app.png; \
	  TESSERA_HEADLESS=1 TESSERA_SCREENSHOT=$$shot timeout 2m "$$bin/$$app" \
	    || { status=$$?; echo "examples: $$app exited with status $$status"; exit 1; }; \
	  printf '\x89PNG\r\n\x1a\n' | cmp -s -n 8 - "$$shot" \
	    || { echo "examples: $$app wrote no PNG at $$shot"; exit 1; }; \
	  echo "examples: $$app ran headless and wrote $$shot"; \
	done

clean:
	rm -rf .build .build-tsan .build-asan .test-output gallery-output Examples/.build
