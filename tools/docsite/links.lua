-- pandoc filter of tools/docsite/md_to_rst.py: docs/*.md as RST for Ansible's docs site.
-- A link to another page of docs/ becomes a reference to that page's label; a link to another file of the
-- repository (not on the docs site) becomes its text and the file's path; a link to a heading of the same page
-- becomes its text. Headings keep no explicit label (antsibull-docs accepts only the collection's labels), and a
-- JSON block that is not JSON (an example with "...") is shown as plain text.
local label = "ansible_collections.flightcontrol.openstack.docsite."

function Link(link)
  local target = link.target
  if target:match("^%a[%w+.-]*:") then
    return nil
  end
  local text = pandoc.utils.stringify(link.content)
  local page = target:match("^([%w_]+)%.md") or target:match("^%./([%w_]+)%.md")
  if page and not target:find("/", 3, true) then
    return pandoc.RawInline("rst", ":ref:`" .. text .. " <" .. label .. page .. ">`")
  end
  local path = target:gsub("#.*$", "")
  if path == "" then
    return pandoc.Str(text)
  end
  return {pandoc.Str(text .. " ("), pandoc.Code(path), pandoc.Str(")")}
end

function Header(header)
  header.identifier = ""
  return header
end

function CodeBlock(block)
  if block.classes:includes("json") then
    local ok, value = pcall(pandoc.json.decode, block.text)
    if not ok or value == nil then
      block.classes = {}
    end
  end
  return block
end
