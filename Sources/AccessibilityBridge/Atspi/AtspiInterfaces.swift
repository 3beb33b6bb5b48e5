/// The methods and properties the bridge serves, with their D-Bus signatures (as at-spi2-core's
/// `xml/*.xml` declares them): what a call is checked against before it is answered, and what
/// `Introspect` describes. A method of AT-SPI's that is not here is answered with
/// `org.freedesktop.DBus.Error.UnknownMethod`.
enum AtspiInterfaces {
    struct Method {
        var input: String
        var output: String
    }

    static let methods: [String: [String: Method]] = [
        Atspi.accessible: [
            "GetChildAtIndex": Method(input: "i", output: "(so)"),
            "GetChildren": Method(input: "", output: "a(so)"),
            "GetIndexInParent": Method(input: "", output: "i"),
            "GetRelationSet": Method(input: "", output: "a(ua(so))"),
            "GetRole": Method(input: "", output: "u"),
            "GetRoleName": Method(input: "", output: "s"),
            "GetLocalizedRoleName": Method(input: "", output: "s"),
            "GetState": Method(input: "", output: "au"),
            "GetAttributes": Method(input: "", output: "a{ss}"),
            "GetApplication": Method(input: "", output: "(so)"),
            "GetInterfaces": Method(input: "", output: "as"),
        ],
        Atspi.application: [
            "GetLocale": Method(input: "u", output: "s"),
            "GetApplicationBusAddress": Method(input: "", output: "s"),
        ],
        Atspi.component: [
            "Contains": Method(input: "iiu", output: "b"),
            "GetAccessibleAtPoint": Method(input: "iiu", output: "(so)"),
            "GetExtents": Method(input: "u", output: "(iiii)"),
            "GetPosition": Method(input: "u", output: "ii"),
            "GetSize": Method(input: "", output: "ii"),
            "GetLayer": Method(input: "", output: "u"),
            "GetMDIZOrder": Method(input: "", output: "n"),
            "GrabFocus": Method(input: "", output: "b"),
            "GetAlpha": Method(input: "", output: "d"),
        ],
        Atspi.action: [
            "GetDescription": Method(input: "i", output: "s"),
            "GetName": Method(input: "i", output: "s"),
            "GetLocalizedName": Method(input: "i", output: "s"),
            "GetKeyBinding": Method(input: "i", output: "s"),
            "GetActions": Method(input: "", output: "a(sss)"),
            "DoAction": Method(input: "i", output: "b"),
        ],
        Atspi.text: [
            "GetStringAtOffset": Method(input: "iu", output: "sii"),
            "GetText": Method(input: "ii", output: "s"),
            "SetCaretOffset": Method(input: "i", output: "b"),
            "GetTextBeforeOffset": Method(input: "iu", output: "sii"),
            "GetTextAtOffset": Method(input: "iu", output: "sii"),
            "GetTextAfterOffset": Method(input: "iu", output: "sii"),
            "GetCharacterAtOffset": Method(input: "i", output: "i"),
            "GetNSelections": Method(input: "", output: "i"),
            "GetSelection": Method(input: "i", output: "ii"),
            "AddSelection": Method(input: "ii", output: "b"),
            "RemoveSelection": Method(input: "i", output: "b"),
            "SetSelection": Method(input: "iii", output: "b"),
            "GetAttributes": Method(input: "i", output: "a{ss}ii"),
            "GetAttributeRun": Method(input: "ib", output: "a{ss}ii"),
            "GetAttributeValue": Method(input: "is", output: "s"),
            "GetDefaultAttributes": Method(input: "", output: "a{ss}"),
            "GetDefaultAttributeSet": Method(input: "", output: "a{ss}"),
        ],
        Atspi.editableText: [
            "SetTextContents": Method(input: "s", output: "b"),
            "InsertText": Method(input: "isi", output: "b"),
            "DeleteText": Method(input: "ii", output: "b"),
        ],
        Atspi.value: [:],
        Atspi.selection: [
            "GetSelectedChild": Method(input: "i", output: "(so)"),
            "SelectChild": Method(input: "i", output: "b"),
            "IsChildSelected": Method(input: "i", output: "b"),
        ],
        Atspi.properties: [
            "Get": Method(input: "ss", output: "v"),
            "GetAll": Method(input: "s", output: "a{sv}"),
            "Set": Method(input: "ssv", output: ""),
        ],
        Atspi.introspectable: ["Introspect": Method(input: "", output: "s")],
        Atspi.peer: ["Ping": Method(input: "", output: ""), "GetMachineId": Method(input: "", output: "s")],
    ]

    struct Property {
        var name: String
        var type: String
    }

    static let properties: [String: [Property]] = [
        Atspi.accessible: [
            Property(name: "Name", type: "s"), Property(name: "Description", type: "s"),
            Property(name: "Parent", type: "(so)"), Property(name: "ChildCount", type: "i"),
            Property(name: "Locale", type: "s"), Property(name: "AccessibleId", type: "s"),
        ],
        Atspi.application: [
            Property(name: "ToolkitName", type: "s"), Property(name: "Version", type: "s"),
            Property(name: "ToolkitVersion", type: "s"), Property(name: "AtspiVersion", type: "s"),
            Property(name: "Id", type: "i"),
        ],
        Atspi.action: [Property(name: "NActions", type: "i")],
        Atspi.text: [Property(name: "CharacterCount", type: "i"), Property(name: "CaretOffset", type: "i")],
        Atspi.value: [
            Property(name: "MinimumValue", type: "d"), Property(name: "MaximumValue", type: "d"),
            Property(name: "MinimumIncrement", type: "d"), Property(name: "CurrentValue", type: "d"),
            Property(name: "Text", type: "s"),
        ],
        Atspi.selection: [Property(name: "NSelectedChildren", type: "i")],
    ]

    /// `signature` cut into its complete types ("(so)i" → ["(so)", "i"]); the signatures here are
    /// all valid.
    static func completeTypes(_ signature: String) -> [String] {
        var types: [String] = []
        var current = ""
        var depth = 0
        for character in signature {
            current.append(character)
            switch character {
            case "(", "{": depth += 1
            case ")", "}": depth -= 1
            default: break
            }
            if depth == 0 && character != "a" {
                types.append(current)
                current = ""
            }
        }
        return types
    }
}
