"""glue.py — the codec glue generated from schema/goblin.xml, with no Java (schema/generate.py's second pass).

sbe-tool's flyweights (native/generated/) know the wire layout but nothing of goblin-ring's
structs. This pass reads the schema itself and writes everything mechanical that follows from
it and from the one table below that says which struct slot each schema field fills:

    native/exec/templates_generated.h     the template ids (GR_T_*), included by exec/request.h
    native/ring/codec_generated.h         the largest block length, the template lists the codec
                                          tests walk, the slot masks, the streamed ArrayReply
                                          writer, and the field-use table (which gr_request_t
                                          slot each request field fills)
    native/ring/codec_stream_generated.h  the ArrayReply read element by element where it lies
                                          (the client's marshal writer), with the decoder's checks
    native/ring/codec_generated.c         every request, reply and attach encode / decode / size
                                          case, enum checks from the validValues, and a
                                          self-check of this pass's offsets against sbe-tool's
                                          flyweights

Every file this pass writes is named *_generated.* (outputs() refuses another name), so a
reader of native/ sees at once which files not to edit; sbe-tool's own output is the
native/generated/ folder.

Naming rule for template ids: a request message drops its "Request" suffix and is upper-cased
without separators (PushRequest -> GR_T_PUSH, MemoryUsageRequest -> GR_T_MEMORYUSAGE,
AttachRequest -> GR_T_ATTACH); any other message is upper-cased word by word with underscores
(IntegerReply -> GR_T_INTEGER_REPLY, Ping -> GR_T_PING).

Why one generic gr_request_t with a declared mapping rather than a struct per message: every
command handler, the RESP argv builders (commands/), the blocking layer and the Python client
read gr_request_t; the mapping is declared once (SLOTS) and everything that would otherwise
know it by heart (the codec's cases, the field-use table, the tests' field lists) comes from it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import declarations  # schema/declarations.py: the command rows' prototypes

SBE_NS = "{http://fixprotocol.io/2016/sbe}"

# ---- the one declared mapping: schema field -> struct slot ----------------------------------
# requestId always fills request_id. A group fills the slot named here (items: gr_bytes_t[],
# elements: gr_element_t[]); a group's entry fields map through ELEMENT_SLOTS.
REQUEST_SLOTS: dict[str, dict[str, str]] = {
    "Ping": {"message": "arg1"},
    "CommandRequest": {"arguments": "items"},
    "DelRequest": {"unlink": "flag", "keys": "items"},
    "ExistsRequest": {"keys": "items"},
    "TypeRequest": {"key": "key"},
    "DbSizeRequest": {},
    "FlushDbRequest": {"all": "flag"},
    "KeysRequest": {"pattern": "arg1"},
    "ScanRequest": {"cursor": "cursor", "count": "count", "pattern": "arg1", "typeFilter": "arg2"},
    "RenameRequest": {"key": "key", "newKey": "arg1"},
    "MemoryUsageRequest": {"key": "key"},
    "SelectRequest": {"db": "index"},
    "MoveRequest": {"db": "index", "key": "key"},
    "SwapDbRequest": {"first": "index", "second": "index2"},
    "PushRequest": {"end": "end", "onlyIfExists": "flag", "engine": "engine", "values": "items", "key": "key"},
    "PopRequest": {"end": "end", "hasCount": "flag", "count": "count", "engine": "engine", "key": "key"},
    "LLenRequest": {"engine": "engine", "key": "key"},
    "LIndexRequest": {"index": "index", "engine": "engine", "key": "key"},
    "LRangeRequest": {"start": "index", "stop": "index2", "engine": "engine", "key": "key"},
    "LSetRequest": {"index": "index", "engine": "engine", "key": "key", "value": "arg1"},
    "LInsertRequest": {"position": "flag", "engine": "engine", "key": "key", "pivot": "arg1", "value": "arg2"},
    "LRemRequest": {"count": "index", "engine": "engine", "key": "key", "value": "arg1"},
    "LTrimRequest": {"start": "index", "stop": "index2", "engine": "engine", "key": "key"},
    "LPosRequest": {"rank": "index", "hasCount": "flag", "count": "count", "maxLen": "max_len",
                    "engine": "engine", "key": "key", "element": "arg1"},
    "LMoveRequest": {"from": "end", "to": "to_end", "engine": "engine", "source": "key", "destination": "arg1"},
    "LMPopRequest": {"end": "end", "count": "count", "engine": "engine", "keys": "items"},
    "BPopRequest": {"end": "end", "timeoutSeconds": "timeout", "engine": "engine", "keys": "items"},
    "BLMoveRequest": {"from": "end", "to": "to_end", "timeoutSeconds": "timeout", "engine": "engine",
                      "source": "key", "destination": "arg1"},
    "BLMPopRequest": {"end": "end", "count": "count", "timeoutSeconds": "timeout", "engine": "engine",
                      "keys": "items"},
    "SetRequest": {"variant": "count", "condition": "end", "expireMode": "to_end", "get": "flag",
                   "expireValue": "index", "key": "key", "value": "arg1"},
    "GetRequest": {"key": "key"},
    "GetDelRequest": {"key": "key"},
    "GetExRequest": {"expireMode": "to_end", "expireValue": "index", "key": "key"},
    "MSetRequest": {"onlyIfNoneExist": "flag", "arguments": "items"},
    "MGetRequest": {"keys": "items"},
    "IncrByRequest": {"delta": "index", "isDecrBy": "flag", "key": "key"},
    "IncrByFloatRequest": {"key": "key", "increment": "arg1"},
    "AppendRequest": {"key": "key", "value": "arg1"},
    "StrLenRequest": {"key": "key"},
    "GetRangeRequest": {"start": "index", "end": "index2", "key": "key"},
    "SetRangeRequest": {"byteOffset": "index", "key": "key", "value": "arg1"},
    "ExpireRequest": {"unit": "to_end", "absolute": "flag", "condition": "end", "value": "index", "key": "key"},
    "TtlRequest": {"kind": "end", "key": "key"},
    "PersistRequest": {"key": "key"},
    "XAddRequest": {"noMkStream": "flag", "trim": "end", "approximate": "to_end", "limit": "index",
                    "pairs": "items", "key": "key", "entryId": "arg1", "threshold": "arg2"},
    "XRangeRequest": {"reverse": "flag", "count": "index", "key": "key", "start": "arg1", "end": "arg2"},
    "XAckRequest": {"ids": "items", "key": "key", "group": "arg1"},
    "XReadGroupRequest": {"noAck": "flag", "count": "count", "timeoutSeconds": "timeout", "streams": "items",
                          "group": "arg1", "consumer": "arg2"},
    "EvalShaRequest": {"readOnly": "flag", "numKeys": "count", "arguments": "items", "sha": "arg1"},
    "FCallRequest": {"readOnly": "flag", "numKeys": "count", "arguments": "items", "function": "arg1"},
}
REPLY_SLOTS: dict[str, dict[str, str]] = {
    "IntegerReply": {"value": "integer"},
    "BulkReply": {"isNil": "is_nil", "value": "text"},
    "ArrayReply": {"elements": "elements"},
    "StatusReply": {"text": "text"},
    "ErrorReply": {"code": "error_code", "message": "text"},
    "PushMessage": {"kind": "push_kind", "pattern": "pattern", "channel": "channel", "payload": "text"},
    "InvalidateMessage": {"flushAll": "is_nil", "key": "text"},
}
ATTACH_SLOTS: dict[str, dict[str, str]] = {
    "AttachRequest": {"protocolVersion": "protocol_version", "ringCapacity": "ring_capacity",
                      "clientPid": "pid", "clientName": "client_name",
                      "username": "username", "password": "password"},
    "AttachReply": {"protocolVersion": "protocol_version", "errorCode": "error_code", "sessionId": "session_id",
                    "ringCapacity": "ring_capacity", "serverPid": "pid", "requestRingName": "request_ring_name",
                    "replyRingName": "reply_ring_name", "errorMessage": "error_message"},
    "AttachConfirm": {"sessionId": "session_id"},
}
ELEMENT_SLOTS = {"kind": "kind", "integer": "integer", "bytes": "bytes"}
# Messages written element by element (sbe_reply.c streams array chunks into its staging).
STREAMED = {"ArrayReply"}

# The structs the three families decode into (their C names and their request-id slot).
FAMILIES = {
    "request": ("gr_request_t", REQUEST_SLOTS, "request"),
    "reply": ("gr_reply_message_t", REPLY_SLOTS, "reply"),
    "attach": ("gr_attach_t", ATTACH_SLOTS, "attach"),
}
# Group slots: C element type, count slot, capacity slot.
GROUP_SLOTS = {
    "items": ("gr_bytes_t", "item_count", "item_capacity"),
    "elements": ("gr_element_t", "element_count", "element_capacity"),
}
# Request slots in mask-bit order (the tests' field lists come from these masks).
REQUEST_SLOT_ORDER = ["end", "to_end", "flag", "engine", "count", "max_len", "index", "index2", "cursor",
                      "timeout", "key", "arg1", "arg2", "items"]

PRIMITIVES = {  # schema primitive -> (C type, bytes)
    "uint8": ("uint8_t", 1), "uint16": ("uint16_t", 2), "uint32": ("uint32_t", 4), "uint64": ("uint64_t", 8),
    "int8": ("int8_t", 1), "int16": ("int16_t", 2), "int32": ("int32_t", 4), "int64": ("int64_t", 8),
    "double": ("double", 8), "char": ("char", 1),
}


@dataclass
class Enum:
    name: str
    primitive: str
    values: list[tuple[str, int]]


@dataclass
class Field:
    name: str
    type: str                 # primitive or enum name
    offset: int
    size: int
    primitive: str
    enum: Enum | None = None


@dataclass
class Group:
    name: str
    fields: list[Field]
    data: list[str]
    block_length: int


@dataclass
class Message:
    name: str
    id: int
    fields: list[Field]
    groups: list[Group]
    data: list[str]
    block_length: int
    family: str = ""
    slots: dict[str, str] = field(default_factory=dict)

    @property
    def snake(self) -> str:
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.name).lower()

    @property
    def template_constant(self) -> str:
        if self.name.endswith("Request"):
            return "GR_T_" + self.name[: -len("Request")].upper()
        return "GR_T_" + re.sub(r"(?<!^)(?=[A-Z])", "_", self.name).upper()

    @property
    def sbe_name(self) -> str:
        return self.name[0].lower() + self.name[1:]


@dataclass
class Schema:
    schema_id: int
    version: int
    group_count_primitive: str
    group_count_max: int
    enums: dict[str, Enum]
    messages: list[Message]


def parse(schema_path: Path) -> Schema:
    root = ET.parse(schema_path).getroot()
    enums: dict[str, Enum] = {}
    group_count_primitive, group_count_max = "uint16", 65534
    types = root.find("types")
    for enum in types.findall("enum"):
        values = [(v.get("name"), int(v.text.strip())) for v in enum.findall("validValue")]
        enums[enum.get("name")] = Enum(enum.get("name"), enum.get("encodingType"), values)
    for composite in types.findall("composite"):
        if composite.get("name") == "groupSizeEncoding":
            for member in composite.findall("type"):
                if member.get("name") == "numInGroup":
                    group_count_primitive = member.get("primitiveType")
                    bits = 8 * PRIMITIVES[group_count_primitive][1]
                    group_count_max = int(member.get("maxValue", (1 << bits) - 2))

    def block_of(element) -> tuple[list[Field], int]:
        fields, offset = [], 0
        for f in element.findall("field"):
            type_name = f.get("type")
            enum = enums.get(type_name)
            primitive = enum.primitive if enum else type_name
            if primitive not in PRIMITIVES:
                raise SystemExit(f"glue.py: field {f.get('name')} has a type this pass does not know: {type_name}")
            if f.get("offset") is not None:
                offset = int(f.get("offset"))
            size = PRIMITIVES[primitive][1]
            fields.append(Field(f.get("name"), type_name, offset, size, primitive, enum))
            offset += size
        return fields, offset

    messages = []
    for m in root.findall(f"{SBE_NS}message"):
        fields, block = block_of(m)
        if m.get("blockLength"):
            block = int(m.get("blockLength"))
        groups = []
        for g in m.findall("group"):
            group_fields, group_block = block_of(g)
            if g.findall("group"):
                raise SystemExit(f"glue.py: nested groups ({m.get('name')}.{g.get('name')}) are not supported")
            groups.append(Group(g.get("name"), group_fields, [d.get("name") for d in g.findall("data")], group_block))
        messages.append(Message(m.get("name"), int(m.get("id")), fields, groups,
                                [d.get("name") for d in m.findall("data")], block))
    schema = Schema(int(root.get("id")), int(root.get("version")), group_count_primitive, group_count_max,
                    enums, messages)
    assign_families(schema)
    return schema


def assign_families(schema: Schema) -> None:
    """Every message is in exactly one family table, and every field it has is mapped there."""
    declared = {}
    for family, (_, table, _) in FAMILIES.items():
        for name, slots in table.items():
            declared[name] = (family, slots)
    names = {m.name for m in schema.messages}
    stale = set(declared) - names
    if stale:
        raise SystemExit(f"glue.py: the slot tables name messages the schema lacks: {sorted(stale)}")
    for message in schema.messages:
        if message.name not in declared:
            raise SystemExit(f"glue.py: message {message.name} is in no slot table (schema/glue.py SLOTS)")
        message.family, message.slots = declared[message.name]
        schema_fields = [f.name for f in message.fields] + [g.name for g in message.groups] + message.data
        for name in schema_fields:
            if name == "requestId":
                continue
            if name not in message.slots:
                raise SystemExit(f"glue.py: {message.name}.{name} has no slot (schema/glue.py SLOTS)")
        for name in message.slots:
            if name not in schema_fields:
                raise SystemExit(f"glue.py: the slot table maps {message.name}.{name}, which the schema lacks")
        for group in message.groups:
            slot = message.slots[group.name]
            if slot == "items" and (group.fields or len(group.data) != 1):
                raise SystemExit(f"glue.py: {message.name}.{group.name} -> items needs entries of one var-data")
            if slot == "elements":
                for name in [f.name for f in group.fields] + group.data:
                    if name not in ELEMENT_SLOTS:
                        raise SystemExit(f"glue.py: {message.name}.{group.name}.{name} has no element slot")


# ---- C emission ------------------------------------------------------------------------------

HEADER_NOTE = "generated by schema/generate.py from schema/goblin.xml and schema/glue.py's slot table; do not edit"


def c_load(primitive: str, at: str) -> str:
    ctype, size = PRIMITIVES[primitive]
    return f"gr_wire_load_{primitive}({at})"


def enum_check(enum: Enum, expression: str) -> str:
    values = sorted(v for _, v in enum.values)
    if values == list(range(values[0], values[-1] + 1)):
        if values[0] == 0:
            return f"({expression}) <= {values[-1]}u"
        return f"(({expression}) >= {values[0]}u && ({expression}) <= {values[-1]}u)"
    return "(" + " || ".join(f"({expression}) == {v}u" for v in values) + ")"


def emit_templates_header(schema: Schema) -> str:
    lines = [
        "/* templates_generated.h — the SBE template ids (GR_T_*) and enum values of schema/goblin.xml.",
        f" * {HEADER_NOTE}.",
        " * Included by exec/request.h; schema/glue.py says how a message name becomes its constant.",
        " */",
        "#ifndef GR_TEMPLATES_GENERATED_H",
        "#define GR_TEMPLATES_GENERATED_H",
        "",
        "/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */",
        "enum gr_template {",
    ]
    for m in sorted(schema.messages, key=lambda m: m.id):
        lines.append(f"    {m.template_constant} = {m.id},   /* {m.name} */")
    lines += ["};", "", "/* The schema's enums, GR_<ENUM>_<VALUE> (ListEngine PMA -> GR_LIST_ENGINE_PMA). */"]
    for enum in schema.enums.values():
        prefix = "GR_" + re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
        members = ", ".join(f"{prefix}{name} = {value}" for name, value in enum.values)
        lines.append(f"enum {{ {members} }};")
    lines += ["/* cffi-cdef-end */", "", "#endif", ""]
    return "\n".join(lines)


def slot_mask(message: Message) -> list[str]:
    return [slot for slot in REQUEST_SLOT_ORDER if slot in message.slots.values()]


def emit_codec_header(schema: Schema) -> str:
    max_block = max(m.block_length for m in schema.messages)
    requests = [m for m in schema.messages if m.family == "request"]
    replies = [m for m in schema.messages if m.family == "reply"]
    attaches = [m for m in schema.messages if m.family == "attach"]
    array = next(m for m in schema.messages if m.name == "ArrayReply")
    element_group = array.groups[0]
    lines = [
        "/* codec_generated.h — what schema/goblin.xml fixes for the codec, as constants and lists.",
        f" * {HEADER_NOTE}.",
        " * The encode/decode entry points are declared in ring/codec.h; this adds the facts the",
        " * tests and the streamed reply writer (ring/sbe_reply.c) need, and which gr_request_t slot",
        " * each request field fills (glue.py's table).",
        " *",
    ] + field_use_comment(schema).splitlines() + [
        " */",
        "#ifndef GR_CODEC_GENERATED_H",
        "#define GR_CODEC_GENERATED_H",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "#include \"exec/request.h\"",
        "",
        "/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */",
        f"#define GR_SCHEMA_ID {schema.schema_id}",
        f"#define GR_SCHEMA_VERSION {schema.version}",
        "#define GR_MESSAGE_HEADER_LENGTH 8",
        f"#define GR_MAX_BLOCK_LENGTH {max_block}          /* the largest message block in the schema */",
        f"#define GR_GROUP_MAX_ITEMS {schema.group_count_max}u   /* the most entries a group holds: groupSizeEncoding.numInGroup's maxValue */",
        f"#define GR_REQUEST_TEMPLATE_COUNT {len(requests)}",
        f"#define GR_REPLY_TEMPLATE_COUNT {len(replies)}",
        f"#define GR_ATTACH_TEMPLATE_COUNT {len(attaches)}",
        "/* ArrayReply as the streamed writer lays it out: block, group header, one element's fixed part. */",
        f"#define GR_ARRAY_REPLY_BLOCK_LENGTH {array.block_length}",
        f"#define GR_ARRAY_REPLY_GROUP_HEADER_LENGTH {2 + PRIMITIVES[schema.group_count_primitive][1]}",
        f"#define GR_ARRAY_REPLY_ELEMENT_FIXED {element_group.block_length + 4 * len(element_group.data)}",
        "",
        "/* Request slots a template carries, as bits (GR_SLOT_*), for the codec tests. */",
        "enum gr_request_slot {",
    ]
    for bit, slot in enumerate(REQUEST_SLOT_ORDER):
        lines.append(f"    GR_SLOT_{slot.upper()} = {1 << bit},")
    lines += [
        "};",
        "extern const uint16_t gr_request_templates[];   /* GR_REQUEST_TEMPLATE_COUNT of them */",
        "extern const uint16_t gr_reply_templates[];     /* GR_REPLY_TEMPLATE_COUNT */",
        "extern const uint16_t gr_attach_templates[];    /* GR_ATTACH_TEMPLATE_COUNT */",
        "/* The GR_SLOT_* bits of a request template (0 for an unknown one). */",
        "uint32_t gr_request_slots(uint16_t template_id);",
        "/* The schema's name of a template (\"PushRequest\"), or NULL. */",
        "const char *gr_template_name(uint16_t template_id);",
        "/* 0 if this pass's offsets and block lengths agree with sbe-tool's flyweights for every",
        " * message, else the template id of the first that differs. */",
        "int gr_codec_self_check(void);",
        "/* cffi-cdef-end */",
        "",
        "/* The streamed ArrayReply writer: head (header, block, a group header counting 0),",
        " * then elements, then patch the count" + (" and put the trailing var-data" if array.data else "") + ". Each returns the",
        " * bytes written, or 0 if capacity is too small (nothing useful written). */",
        "size_t gr_stream_array_reply_head(const gr_reply_message_t *reply, uint8_t *buffer, size_t capacity);",
        "size_t gr_stream_array_reply_element(const gr_element_t *element, uint8_t *buffer, size_t capacity);",
    ] + (["/* `count` BULK elements, one per value, as gr_stream_array_reply_element writes each; 0 (with",
          " * some written) if capacity is too small. */",
          "size_t gr_stream_array_reply_bulks(const gr_bytes_t *values, size_t count, uint8_t *buffer, size_t capacity);"]
         if len(array.groups[0].data) == 1 else []) + [
        "void gr_stream_array_reply_set_count(uint8_t *message, uint32_t count);",
    ] + (["size_t gr_stream_array_reply_tail(const gr_reply_message_t *reply, uint8_t *buffer, size_t capacity);"]
         if array.data else []) + [
        "",
        "#endif",
        "",
    ]
    return "\n".join(lines)


class Emitter:
    def __init__(self, schema: Schema):
        self.schema = schema
        self.out: list[str] = []
        self.count_primitive = schema.group_count_primitive
        self.count_size = PRIMITIVES[self.count_primitive][1]

    def w(self, line: str = "") -> None:
        self.out.append(line)

    # -- decode
    def decode_fields(self, fields: list[Field], slots: dict[str, str], target: str, base: str,
                      indent: str = "        ") -> None:
        for f in fields:
            slot = "request_id" if f.name == "requestId" else slots[f.name]
            self.w(f"{indent}{target}{slot} = {c_load(f.primitive, f'{base} + {f.offset}')};")
            if f.enum:
                self.w(f"{indent}if (!({enum_check(f.enum, target + slot)})) return GR_CODEC_BAD_ENUM;")

    def decode_message(self, m: Message, struct_ptr: str) -> None:
        self.w(f"    case {m.template_constant}: {{   /* {m.name} */")
        self.w(f"        if (header.block_length < {m.block_length}) return GR_CODEC_SHORT_BLOCK;")
        self.w("        if (length - GR_MESSAGE_HEADER_LENGTH < header.block_length) return GR_CODEC_TRUNCATED;")
        self.w("        const uint8_t *block = buffer + GR_MESSAGE_HEADER_LENGTH;")
        self.decode_fields(m.fields, m.slots, f"{struct_ptr}->", "block")
        if m.groups or m.data:
            self.w("        size_t position = GR_MESSAGE_HEADER_LENGTH + (size_t)header.block_length;")
        for g in m.groups:
            slot = m.slots[g.name]
            _, count_slot, capacity_slot = GROUP_SLOTS[slot]
            self.w("        {")
            self.w(f"            uint32_t entry_block, count;")
            self.w(f"            TRY(gr_wire_group_header(buffer, length, &position, {self.count_size}, "
                   f"{g.block_length}, {len(g.data)}, &entry_block, &count));")
            self.w(f"            {struct_ptr}->{count_slot} = count;")
            self.w(f"            if (count > {struct_ptr}->{capacity_slot}) return GR_CODEC_TOO_MANY_ITEMS;")
            if slot == "items":
                self.w("            for (uint32_t i = 0; i < count; i++) {")
                self.w("                if (length - position < entry_block) return GR_CODEC_TRUNCATED;")
                self.w("                position += entry_block;")
                self.w(f"                TRY(gr_wire_take_var_data(buffer, length, &position, &{struct_ptr}->items[i]));")
                self.w("            }")
            else:
                self.w("            for (uint32_t i = 0; i < count; i++) {")
                self.w(f"                gr_element_t *element = &{struct_ptr}->elements[i];")
                self.w("                if (length - position < entry_block) return GR_CODEC_TRUNCATED;")
                self.w("                const uint8_t *entry = buffer + position;")
                self.decode_fields(g.fields, ELEMENT_SLOTS, "element->", "entry", "                ")
                self.w("                position += entry_block;")
                for d in g.data:
                    self.w(f"                TRY(gr_wire_take_var_data(buffer, length, &position, &element->{ELEMENT_SLOTS[d]}));")
                self.w("            }")
            self.w("        }")
        for d in m.data:
            self.w(f"        TRY(gr_wire_take_var_data(buffer, length, &position, &{struct_ptr}->{m.slots[d]}));")
        self.w("        return GR_CODEC_OK;")
        self.w("    }")

    # -- size and encode
    def size_expression(self, m: Message, p: str) -> list[str]:
        parts = [f"GR_MESSAGE_HEADER_LENGTH + {m.block_length}"]
        for d in m.data:
            parts.append(f"4 + (size_t){p}->{m.slots[d]}.length")
        return parts

    def group_size_lines(self, m: Message, p: str, indent: str) -> list[str]:
        lines = []
        for g in m.groups:
            slot = m.slots[g.name]
            _, count_slot, _ = GROUP_SLOTS[slot]
            per_entry = g.block_length + 4 * len(g.data)
            lines.append(f"{indent}size += {2 + self.count_size} + (size_t){p}->{count_slot} * {per_entry};")
            if slot == "items":
                lines.append(f"{indent}for (uint32_t i = 0; i < {p}->{count_slot}; i++) size += {p}->items[i].length;")
            else:
                lines.append(f"{indent}for (uint32_t i = 0; i < {p}->{count_slot}; i++) size += {p}->elements[i].bytes.length;")
        return lines

    def encode_fields(self, fields: list[Field], slots: dict[str, str], source: str, base: str, indent: str) -> None:
        for f in fields:
            slot = "request_id" if f.name == "requestId" else slots[f.name]
            ctype = PRIMITIVES[f.primitive][0]
            self.w(f"{indent}gr_wire_store_{f.primitive}({base} + {f.offset}, ({ctype}){source}{slot});")

    def enum_checks(self, fields: list[Field], slots: dict[str, str], source: str) -> list[str]:
        checks = []
        for f in fields:
            if f.enum:
                checks.append(enum_check(f.enum, source + slots[f.name]))
        return checks

    def encode_message(self, m: Message, p: str) -> None:
        self.w(f"    case {m.template_constant}: {{   /* {m.name} */")
        checks = self.enum_checks(m.fields, m.slots, f"{p}->")
        if checks:
            self.w(f"        if (!({' && '.join(checks)})) return GR_CODEC_BAD_ENUM;")
        for g in m.groups:
            slot = m.slots[g.name]
            _, count_slot, _ = GROUP_SLOTS[slot]
            self.w(f"        if ({p}->{count_slot} > GR_GROUP_MAX_ITEMS) return GR_CODEC_TOO_MANY_ITEMS;")
            if slot == "elements":
                element_checks = self.enum_checks(g.fields, ELEMENT_SLOTS, f"{p}->elements[i].")
                if element_checks:
                    self.w(f"        for (uint32_t i = 0; i < {p}->{count_slot}; i++)")
                    self.w(f"            if (!({' && '.join(element_checks)})) return GR_CODEC_BAD_ENUM;")
        self.w(f"        size_t size = {' + '.join(self.size_expression(m, p))};")
        for line in self.group_size_lines(m, p, "        "):
            self.w(line)
        self.w("        if (size > capacity) return GR_CODEC_NO_SPACE;")
        self.w(f"        gr_wire_put_header(buffer, {m.block_length}, {m.template_constant});")
        self.w("        uint8_t *block = buffer + GR_MESSAGE_HEADER_LENGTH;")
        self.w(f"        memset(block, 0, {m.block_length});")
        self.encode_fields(m.fields, m.slots, f"{p}->", "block", "        ")
        self.w(f"        size_t position = GR_MESSAGE_HEADER_LENGTH + {m.block_length};")
        for g in m.groups:
            slot = m.slots[g.name]
            _, count_slot, _ = GROUP_SLOTS[slot]
            self.w(f"        gr_wire_put_group_header(buffer, &position, {self.count_size}, {g.block_length}, {p}->{count_slot});")
            self.w(f"        for (uint32_t i = 0; i < {p}->{count_slot}; i++) {{")
            if slot == "items":
                self.w(f"            gr_wire_put_var_data(buffer, &position, {p}->items[i]);")
            else:
                self.w("            uint8_t *entry = buffer + position;")
                self.w(f"            memset(entry, 0, {g.block_length});")
                self.encode_fields(g.fields, ELEMENT_SLOTS, f"{p}->elements[i].", "entry", "            ")
                self.w(f"            position += {g.block_length};")
                for d in g.data:
                    self.w(f"            gr_wire_put_var_data(buffer, &position, {p}->elements[i].{ELEMENT_SLOTS[d]});")
            self.w("        }")
        for d in m.data:
            self.w(f"        gr_wire_put_var_data(buffer, &position, {p}->{m.slots[d]});")
        self.w("        *length = position;")
        self.w("        return GR_CODEC_OK;")
        self.w("    }")

    def size_message(self, m: Message, p: str) -> None:
        self.w(f"    case {m.template_constant}: {{")
        self.w(f"        size_t size = {' + '.join(self.size_expression(m, p))};")
        for line in self.group_size_lines(m, p, "        "):
            self.w(line)
        self.w("        return size;")
        self.w("    }")

    def family_functions(self, family: str) -> None:
        ctype, _, short = FAMILIES[family]
        messages = [m for m in self.schema.messages if m.family == family]
        preserved = {"request": ("items", "item_capacity", "gr_bytes_t *"),
                     "reply": ("elements", "element_capacity", "gr_element_t *")}.get(family)
        self.w(f"gr_codec_status_t gr_decode_{short}(const uint8_t *buffer, size_t length, {ctype} *out) {{")
        self.w("    gr_wire_header_t header;")
        self.w("    TRY(gr_wire_read_header(buffer, length, &header));")
        if preserved:
            array, capacity, array_type = preserved
            self.w(f"    {array_type}{array} = out->{array};")
            self.w(f"    uint32_t {capacity} = out->{capacity};")
            self.w("    memset(out, 0, sizeof *out);")
            self.w(f"    out->{array} = {array};")
            self.w(f"    out->{capacity} = {capacity};")
        else:
            self.w("    memset(out, 0, sizeof *out);")
        self.w("    out->template_id = header.template_id;")
        self.w("    switch (header.template_id) {")
        for m in messages:
            self.decode_message(m, "out")
        self.w("    default:")
        self.w("        return GR_CODEC_UNKNOWN_TEMPLATE;")
        self.w("    }")
        self.w("}")
        self.w()
        self.w(f"gr_codec_status_t gr_encode_{short}(const {ctype} *in, uint8_t *buffer, size_t capacity, size_t *length) {{")
        self.w("    switch (in->template_id) {")
        for m in messages:
            self.encode_message(m, "in")
        self.w("    default:")
        self.w("        return GR_CODEC_UNKNOWN_TEMPLATE;")
        self.w("    }")
        self.w("}")
        self.w()
        self.w(f"size_t gr_{short}_encoded_size(const {ctype} *in) {{")
        self.w("    switch (in->template_id) {")
        for m in messages:
            self.size_message(m, "in")
        self.w("    default:")
        self.w("        return 0;")
        self.w("    }")
        self.w("}")
        self.w()

    def stream_functions(self) -> None:
        m = next(m for m in self.schema.messages if m.name == "ArrayReply")
        g = m.groups[0]
        self.w("size_t gr_stream_array_reply_head(const gr_reply_message_t *in, uint8_t *buffer, size_t capacity) {")
        self.w(f"    size_t size = GR_MESSAGE_HEADER_LENGTH + {m.block_length} + {2 + self.count_size};")
        self.w("    if (capacity < size) return 0;")
        self.w(f"    gr_wire_put_header(buffer, {m.block_length}, {m.template_constant});")
        self.w("    uint8_t *block = buffer + GR_MESSAGE_HEADER_LENGTH;")
        self.w(f"    memset(block, 0, {m.block_length});")
        self.encode_fields(m.fields, m.slots, "in->", "block", "    ")
        self.w(f"    size_t position = GR_MESSAGE_HEADER_LENGTH + {m.block_length};")
        self.w(f"    gr_wire_put_group_header(buffer, &position, {self.count_size}, {g.block_length}, 0);")
        self.w("    return position;")
        self.w("}")
        self.w()
        self.w("size_t gr_stream_array_reply_element(const gr_element_t *in, uint8_t *buffer, size_t capacity) {")
        sizes = " + ".join([str(g.block_length)] + [f"4 + (size_t)in->{ELEMENT_SLOTS[d]}.length" for d in g.data])
        self.w(f"    size_t size = {sizes};")
        self.w("    if (capacity < size) return 0;")
        self.w("    uint8_t *entry = buffer;")
        self.w(f"    memset(entry, 0, {g.block_length});")
        self.encode_fields(g.fields, ELEMENT_SLOTS, "in->", "entry", "    ")
        self.w(f"    size_t position = {g.block_length};")
        for d in g.data:
            self.w(f"    gr_wire_put_var_data_short(buffer, &position, in->{ELEMENT_SLOTS[d]});")
        self.w("    return position;")
        self.w("}")
        self.w()
        if len(g.data) == 1:
            # A run of BULK elements (LRANGE's, LMPOP's values): the element case above in a
            # loop, its fixed fields constant, one call for the run.
            self.w("size_t gr_stream_array_reply_bulks(const gr_bytes_t *values, size_t count, uint8_t *buffer, size_t capacity) {")
            self.w("    size_t position = 0;")
            self.w("    for (size_t i = 0; i < count; i++) {")
            self.w(f"        if (capacity - position < {g.block_length} + 4 + (size_t)values[i].length) return 0;")
            self.w("        const gr_element_t element = {GR_ELEMENT_KIND_BULK, 0, values[i]};")
            self.w("        const gr_element_t *in = &element;")
            self.w("        uint8_t *entry = buffer + position;")
            self.w(f"        memset(entry, 0, {g.block_length});")
            self.encode_fields(g.fields, ELEMENT_SLOTS, "in->", "entry", "        ")
            self.w(f"        size_t at = {g.block_length};")
            self.w(f"        gr_wire_put_var_data_short(entry, &at, in->{ELEMENT_SLOTS[g.data[0]]});")
            self.w("        position += at;")
            self.w("    }")
            self.w("    return position;")
            self.w("}")
            self.w()
        self.w("void gr_stream_array_reply_set_count(uint8_t *message, uint32_t count) {")
        self.w(f"    gr_wire_store_{self.count_primitive}(message + GR_MESSAGE_HEADER_LENGTH + {m.block_length} + 2, "
               f"({PRIMITIVES[self.count_primitive][0]})count);")
        self.w("}")
        self.w()
        if not m.data:
            return
        self.w("size_t gr_stream_array_reply_tail(const gr_reply_message_t *in, uint8_t *buffer, size_t capacity) {")
        sizes = " + ".join(["0"] + [f"4 + (size_t)in->{m.slots[d]}.length" for d in m.data])
        self.w(f"    size_t size = {sizes};")
        self.w("    if (capacity < size) return 0;")
        self.w("    size_t position = 0;")
        for d in m.data:
            self.w(f"    gr_wire_put_var_data(buffer, &position, in->{m.slots[d]});")
        self.w("    return position;")
        self.w("}")
        self.w()

    def self_check(self) -> None:
        self.w("int gr_codec_self_check(void) {")
        for m in self.schema.messages:
            s = m.sbe_name
            conditions = [f"{m.template_constant} != GOBLIN_{re.sub(r'(?<!^)(?=[A-Z])', '_', m.name).upper()}_SBE_TEMPLATE_ID",
                          f"goblin_{s}_sbe_block_length() != {m.block_length}"]
            for f in m.fields:
                conditions.append(f"goblin_{s}_{f.name}_encoding_offset() != {f.offset}")
            for g in m.groups:
                conditions.append(f"goblin_{s}_{g.name}_sbe_block_length() != {g.block_length}")
                for f in g.fields:
                    conditions.append(f"goblin_{s}_{g.name}_{f.name}_encoding_offset() != {f.offset}")
            joiner = " ||\n        "
            self.w(f"    if ({joiner.join(conditions)})")
            self.w(f"        return {m.template_constant};")
        self.w("    return 0;")
        self.w("}")
        self.w()

    def emit(self) -> str:
        s = self.schema
        self.w("/* codec_generated.c — every message's encode, decode and size case, and its enum checks.")
        self.w(f" * {HEADER_NOTE}.")
        self.w(" * The bounds rules (ring/codec_wire.h) are hand-written once; what each message holds and")
        self.w(" * which struct slot each field fills is generated here from the schema and glue.py's table.")
        self.w(" */")
        self.w('#include "ring/codec.h"')
        self.w('#include "ring/codec_generated.h"')
        self.w('#include "ring/codec_wire.h"')
        self.w()
        self.w("#include <string.h>")
        self.w()
        for m in s.messages:
            self.w(f'#include "generated/goblin/{m.sbe_name}.h"')
        self.w()
        for family, name in (("request", "gr_request_templates"), ("reply", "gr_reply_templates"),
                             ("attach", "gr_attach_templates")):
            ids = ", ".join(m.template_constant for m in s.messages if m.family == family)
            self.w(f"const uint16_t {name}[] = {{{ids}}};")
        self.w()
        self.w("uint32_t gr_request_slots(uint16_t template_id) {")
        self.w("    switch (template_id) {")
        for m in s.messages:
            if m.family != "request":
                continue
            bits = " | ".join(f"GR_SLOT_{slot.upper()}" for slot in slot_mask(m)) or "0"
            self.w(f"    case {m.template_constant}: return {bits};")
        self.w("    default: return 0;")
        self.w("    }")
        self.w("}")
        self.w()
        self.w("const char *gr_template_name(uint16_t template_id) {")
        self.w("    switch (template_id) {")
        for m in s.messages:
            self.w(f'    case {m.template_constant}: return "{m.name}";')
        self.w("    default: return NULL;")
        self.w("    }")
        self.w("}")
        self.w()
        for family in ("request", "reply", "attach"):
            self.family_functions(family)
        self.stream_functions()
        self.self_check()
        return "\n".join(self.out)


def emit_stream_reader_header(schema: Schema) -> str:
    """ring/codec_stream_generated.h: the ArrayReply read one element at a time where it lies, with
    gr_decode_reply's checks (the same generated lines), for a reader that consumes each
    element at once (client/plain_reply.c writes marshal from it) instead of an element array."""
    m = next(m for m in schema.messages if m.name == "ArrayReply")
    g = m.groups[0]
    if m.data or len(m.groups) != 1 or len(g.data) != 1:
        raise ValueError("the streamed ArrayReply reader knows one group of one var-data field and no trailing data")
    emitter = Emitter(schema)
    count_size = PRIMITIVES[schema.group_count_primitive][1]
    w = emitter.w
    for line in [
        "/* codec_stream_generated.h — the ArrayReply read element by element, straight from the message.",
        f" * {HEADER_NOTE}.",
        " * The checks are gr_decode_reply's ArrayReply case (codec_generated.c), made one element at",
        " * a time: open reads the header, the block and the group header; next reads one element,",
        " * its bytes pointing into the message. A reader that consumes each element where it lies",
        " * (client/plain_reply.c writes a reply as marshal from it) needs no gr_element_t array.",
        " */",
        "#ifndef GR_CODEC_STREAM_GENERATED_H",
        "#define GR_CODEC_STREAM_GENERATED_H",
        "",
        "#include \"ring/codec_wire.h\"",
        "",
        "typedef struct gr_array_reply_reader {",
        "    const uint8_t *buffer;",
        "    size_t length;",
        "    size_t position;               /* the next element's entry */",
        "    uint32_t entry_block;",
        "    uint32_t count;                /* the elements the group header announces */",
        "} gr_array_reply_reader_t;",
        "",
        "/* The message's header and block (into *head: its block fields only) and its group header. */",
        "static inline gr_codec_status_t gr_stream_array_reply_open(const uint8_t *buffer, size_t length,",
        "                                                           gr_reply_message_t *head,",
        "                                                           gr_array_reply_reader_t *reader) {",
        "    gr_wire_header_t header;",
        "    TRY(gr_wire_read_header(buffer, length, &header));",
        f"    if (header.template_id != {m.template_constant}) return GR_CODEC_UNKNOWN_TEMPLATE;",
        f"    if (header.block_length < {m.block_length}) return GR_CODEC_SHORT_BLOCK;",
        "    if (length - GR_MESSAGE_HEADER_LENGTH < header.block_length) return GR_CODEC_TRUNCATED;",
        "    const uint8_t *block = buffer + GR_MESSAGE_HEADER_LENGTH;",
    ]:
        w(line)
    emitter.decode_fields(m.fields, m.slots, "head->", "block", "    ")
    for line in [
        "    reader->buffer = buffer;",
        "    reader->length = length;",
        "    reader->position = GR_MESSAGE_HEADER_LENGTH + (size_t)header.block_length;",
        f"    return gr_wire_group_header(buffer, length, &reader->position, {count_size}, {g.block_length}, "
        f"{len(g.data)}, &reader->entry_block, &reader->count);",
        "}",
        "",
        "/* The next element (the caller counts them against reader->count). */",
        "static inline gr_codec_status_t gr_stream_array_reply_next(gr_array_reply_reader_t *reader,",
        "                                                           gr_element_t *element) {",
        "    if (reader->length - reader->position < reader->entry_block) return GR_CODEC_TRUNCATED;",
        "    const uint8_t *entry = reader->buffer + reader->position;",
    ]:
        w(line)
    emitter.decode_fields(g.fields, ELEMENT_SLOTS, "element->", "entry", "    ")
    w("    reader->position += reader->entry_block;")
    w(f"    return gr_wire_take_var_data(reader->buffer, reader->length, &reader->position, "
      f"&element->{ELEMENT_SLOTS[g.data[0]]});")
    w("}")
    w("")
    w("#endif")
    w("")
    return "\n".join(emitter.out)


def field_use_comment(schema: Schema) -> str:
    """The field-use table codec_generated.h opens with, from the slot table."""
    lines = [" * Field use per request template (slot [schema field]):"]
    for m in schema.messages:
        if m.family != "request":
            continue
        uses = []
        for name, slot in m.slots.items():
            uses.append(slot if slot == name else f"{slot} [{name}]")
        lines.append(f" *   {m.name:<20} {', '.join(uses) or '(none)'}")
    return "\n".join(lines)


REQUEST_SLOT_TYPES = {
    "end": "uint8_t", "to_end": "uint8_t", "flag": "uint8_t", "engine": "uint8_t", "count": "uint32_t",
    "max_len": "uint32_t", "index": "int64_t", "index2": "int64_t", "cursor": "uint64_t", "timeout": "double",
    "key": "gr_bytes_t", "arg1": "gr_bytes_t", "arg2": "gr_bytes_t",
}


def view_name(message: Message) -> str:
    """GetExRequest -> getex: the template constant's word, lower-cased."""
    return message.template_constant[len("GR_T_"):].lower()


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def emit_request_views(schema: Schema) -> str:
    """Per request template, its fields under the schema's names: a handler reads
    `gr_getex_view(r).expire_value`, not the generic slot `r->index` it travels in."""
    lines = [
        "/* request_views_generated.h — every request template's fields under the schema's names.",
        f" * {HEADER_NOTE}.",
        " * gr_request_t carries every template in generic slots (count, index, arg1, ...); a handler takes",
        " * its template's view, gr_<name>_view(request), and reads the fields by what they mean. The view",
        " * is a value the compiler keeps in registers: reading it costs what reading the slots costs.",
        " */",
        "#ifndef GR_REQUEST_VIEWS_GENERATED_H",
        "#define GR_REQUEST_VIEWS_GENERATED_H",
        "",
        "#include <stdint.h>",
        "",
        '#include "exec/request.h"',
        "",
    ]
    for message in schema.messages:
        if message.family != "request" or not message.slots:
            continue
        name = view_name(message)
        members, values = [], []
        for field_name, slot in message.slots.items():
            if slot == "items":
                members.append(f"    uint32_t {snake(field_name)}_count;")
                members.append(f"    const gr_bytes_t *{snake(field_name)};")
                values += ["r->item_count", "r->items"]
            else:
                members.append(f"    {REQUEST_SLOT_TYPES[slot]} {snake(field_name)};")
                values.append(f"r->{slot}")
        lines.append(f"/* {message.name} (template {message.template_constant}) */")
        lines.append(f"typedef struct gr_{name}_view {{")
        lines.extend(members)
        lines.append(f"}} gr_{name}_view_t;")
        lines.append(f"static inline gr_{name}_view_t gr_{name}_view(const gr_request_t *r) {{")
        lines.append(f"    return (gr_{name}_view_t){{{', '.join(values)}}};")
        lines.append("}")
        lines.append("")
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def outputs(root: Path) -> dict[Path, str]:
    """Every file this pass writes, by path, with its expected content."""
    schema = parse(root / "schema" / "goblin.xml")
    files = {
        root / "native" / "exec" / "templates_generated.h": emit_templates_header(schema),
        root / "native" / "ring" / "codec_generated.h": emit_codec_header(schema),
        root / "native" / "ring" / "codec_generated.c": Emitter(schema).emit(),
        root / "native" / "ring" / "codec_stream_generated.h": emit_stream_reader_header(schema),
        root / "native" / "exec" / "request_views_generated.h": emit_request_views(schema),
        declarations.declarations_path(root): declarations.emit(root),
    }
    for path in files:
        if not path.stem.endswith("_generated"):
            raise ValueError(f"{path.name}: a generated file's name ends in _generated")
    return files
