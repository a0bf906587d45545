// Everything is in the header, as static inline functions; SwiftPM needs one source file per C target.
#include "CStimpakAtomics.h"
