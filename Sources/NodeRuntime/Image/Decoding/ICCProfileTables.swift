/// An ICC profile's lookup tables checked against the tags that hold them, before LittleCMS reads
/// the profile. LittleCMS allocates (and zeroes) a table's whole size as its tag declares it before
/// it reads the table, so a 200-byte `lut16` tag declaring 3 inputs, 15 outputs and 255 grid points
/// would cost 497 MB; here every `lut8` (`mft1`), `lut16` (`mft2`), `lutAtoB` (`mAB `) and `lutBtoA`
/// (`mBA `) tag must hold the tables it declares (input and output tables and the colour lookup
/// table, as its channel counts, grid points and entry counts give them), or the profile is not used.
/// What this does not look at (a multi-process element's tables, for one) is bounded by the
/// allocator each conversion's LittleCMS context counts against (`ColourConversions.memoryLimit`).
/// - Thread: any
enum ICCProfileTables {
    /// Why `profile` cannot be used, or nil when each lookup-table tag holds what it declares. Tags
    /// that lie outside the profile, and anything else amiss, are left for LittleCMS to judge.
    static func refusal(_ profile: [UInt8]) -> String? {
        let size = profile.count
        guard size >= 132 else { return nil }
        func u8(_ i: Int) -> Int { Int(profile[i]) }
        func u16(_ i: Int) -> Int { Int(profile[i]) << 8 | Int(profile[i + 1]) }
        func u32(_ i: Int) -> Int { u16(i) << 16 | u16(i + 2) }
        func name(_ value: Int) -> String {
            String(decoding: [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) }, as: UTF8.self)
        }
        let tags = min(u32(128), (size - 132) / 12)
        for index in 0..<tags {
            let entry = 132 + 12 * index
            let offset = u32(entry + 4), length = u32(entry + 8)
            guard length >= 12, offset <= size - length else { continue }
            let type = name(u32(offset))
            var needed = 0
            switch type {
            case "mft1", "mft2":
                let header = type == "mft1" ? 48 : 52
                guard length >= header else { needed = header; break }
                let inputs = u8(offset + 8), outputs = u8(offset + 9), grid = u8(offset + 10)
                let sample = type == "mft1" ? 1 : 2
                let inputEntries = type == "mft1" ? 256 : u16(offset + 48)
                let outputEntries = type == "mft1" ? 256 : u16(offset + 50)
                var cube = 1
                for _ in 0..<inputs { cube = ByteCount.product(cube, grid) }
                needed = ByteCount.sum(header, ByteCount.product(sample, inputEntries, inputs),
                                       ByteCount.product(sample, cube, outputs), ByteCount.product(sample, outputEntries, outputs))
            case "mAB ", "mBA ":
                guard length >= 32 else { needed = 32; break }
                let inputs = u8(offset + 8), outputs = u8(offset + 9)
                let table = u32(offset + 24)
                guard table != 0 else { continue }
                guard table <= length - 20 else { needed = ByteCount.sum(table, 20); break }
                let start = offset + table
                var cube = 1
                for channel in 0..<min(inputs, 16) { cube = ByteCount.product(cube, u8(start + channel)) }
                needed = ByteCount.sum(table, 20, ByteCount.product(u8(start + 16), cube, outputs))
            default:
                continue
            }
            if needed > length {
                let declared = needed == .max ? "more bytes than can be counted" : "\(needed) bytes"
                return "its \(name(u32(entry)).debugDescription) tag (\(type.filter { $0 != " " })) declares tables of "
                    + "\(declared) in \(length)"
            }
        }
        return nil
    }
}
