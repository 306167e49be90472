// What marks a data disk as ours: the GPT partition name and type we give the
// data partition, and the ext4 label. Its own header so that the table's
// writers (partition.*, grow_partition.*) name them without the probed facts.
#pragma once

namespace cosmicac::disk {

inline constexpr const char* kPartitionName = "cosmicac-data";
inline constexpr const char* kFilesystemLabel = "cosmicac-data";  // ext4 labels: ≤ 16 bytes
inline constexpr const char* kLinuxFsTypeGuid = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";

}  // namespace cosmicac::disk
