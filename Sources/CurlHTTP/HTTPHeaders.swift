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
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of the field named `name` (case-insensitive), in arrival order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
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

    /// Whether two field names are the same, ignoring ASCII case only (names are ASCII tokens; no locale rules),
    /// without making a string.
    private static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8) { a, b in
            a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A)
        }
    }
}
