/// The header fields of one HTTP response, in the order the server sent them.
///
/// Field names compare case-insensitively (RFC 9110 section 5.1), so `headers["content-type"]`
/// finds `Content-Type`. Repeated fields are kept as separate entries; ``subscript(_:)``
/// returns the first, ``values(for:)`` all of them. Only the final response's headers are
/// kept: interim `1xx` responses are discarded.
public struct HTTPHeaders: Sendable, Equatable, RandomAccessCollection, CustomStringConvertible {
    /// One header field as received: name as the server spelled it, value with surrounding
    /// whitespace removed.
    public struct Field: Sendable, Equatable {
        /// The field name, in the server's spelling.
        public let name: String
        /// The field value, trimmed of leading and trailing spaces and tabs.
        public let value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in arrival order.
    public private(set) var fields: [Field]

    /// Creates headers from fields in order.
    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// The first value of the field named `name` (case-insensitive), or `nil` if absent.
    public subscript(name: String) -> String? {
        let wanted = Self.fold(name)
        return fields.first { Self.fold($0.name) == wanted }?.value
    }

    /// Every value of the field named `name` (case-insensitive), in arrival order.
    public func values(for name: String) -> [String] {
        let wanted = Self.fold(name)
        return fields.filter { Self.fold($0.name) == wanted }.map(\.value)
    }

    /// The position of the first field.
    public var startIndex: Int { fields.startIndex }
    /// The position after the last field.
    public var endIndex: Int { fields.endIndex }
    /// The field at `position`.
    public subscript(position: Int) -> Field { fields[position] }

    /// `Name: value` lines, one per field.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// Appends one field; used while headers arrive.
    mutating func append(_ field: Field) {
        fields.append(field)
    }

    /// Drops every field; used when an interim (`1xx`) response is followed by the final one.
    mutating func removeAll() {
        fields.removeAll()
    }

    /// ASCII lower-casing: header names are ASCII tokens, and this avoids locale rules.
    private static func fold(_ name: String) -> String {
        String(decoding: name.utf8.map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
