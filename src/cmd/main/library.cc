// libkubesched.so is made of the modules' archives, linked whole (src/CMakeLists.txt); a shared
// library target needs one source file of its own, and this is it.
