#ifndef TESSERA_CICU_SHIM_H
#define TESSERA_CICU_SHIM_H

// ICU (icu-uc) enters through this system library for its pkg-config flags and link line only. Its
// headers are included by the TesseraICU target's implementation, never by Swift: Foundation carries
// its own copy of ICU's C types, and the two would clash in any Swift file that saw both.

#endif
