# Tessera: the two commands a person needs.
#   make gallery   install what is missing, build, run the gallery (headless when there is no display)
#   make test      install what is missing, build, run the tests offscreen (SDL's dummy video driver)
SHELL := /bin/bash

RUNTIME_PACKAGES := libsdl2-dev libsdl2-ttf-dev libsdl2-image-dev
TEST_PACKAGES := $(RUNTIME_PACKAGES) xvfb
# Arguments passed to the gallery, e.g. make gallery ARGS="--frames 300".
ARGS ?=

.PHONY: gallery test build deps test-deps clean

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

build: deps
	swift build -c release --product gallery

gallery: build
	.build/release/gallery $(ARGS)

test: test-deps
	SDL_VIDEODRIVER=dummy timeout 20m swift test

clean:
	rm -rf .build .test-output gallery-output
