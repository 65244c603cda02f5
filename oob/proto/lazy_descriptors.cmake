# cmake -DPB_CC=<file.pb.cc> -P lazy_descriptors.cmake
#
# Makes the descriptors of a generated .pb.cc register lazily: removes the
# static AddDescriptorsRunner that protoc 3.21 emits to force the
# registration at dynamic initialization (before main). Protobuf registers a
# file's descriptors on first need anyway (a message's GetDescriptor() or
# GetReflection() goes through AssignDescriptors(), which adds the file first);
# later protoc releases leave that runner out of descriptor.proto for this
# reason ("Descriptor initialization will still be performed lazily when it's
# needed", src/google/protobuf/compiler/cpp/file.cc).
#
# Why: the binary exchange never needs a descriptor, and registering
# endpoint.proto parsed and indexed its whole FileDescriptorProto in every
# process: 308,000 instructions before main, which the lab's emulator runs
# on freshly translated code in each process (issue 15, docs/performance.md).
# The readable JSON form, dumps and error locations still have every
# descriptor (tests/unit/oob/lazy_descriptors_test.cc).
#
# A .pb.cc without the runner is an error, so that a protoc that writes it
# differently is noticed, not silently eager.
if(NOT PB_CC)
  message(FATAL_ERROR "lazy_descriptors.cmake: PB_CC not set")
endif()
file(READ "${PB_CC}" text)
set(runner_regex "PROTOBUF_ATTRIBUTE_INIT_PRIORITY2 static ::_pbi::AddDescriptorsRunner dynamic_init_dummy_[A-Za-z0-9_]+\\(&descriptor_table_[A-Za-z0-9_]+\\);")
string(REGEX MATCH "${runner_regex}" runner "${text}")
if(NOT runner)
  message(FATAL_ERROR "lazy_descriptors.cmake: ${PB_CC} has no AddDescriptorsRunner line "
                      "(protoc's output changed; update oob/proto/lazy_descriptors.cmake)")
endif()
string(REPLACE "${runner}"
       "// qpconnect: registered lazily, on first need (oob/proto/lazy_descriptors.cmake)."
       text "${text}")
file(WRITE "${PB_CC}" "${text}")
