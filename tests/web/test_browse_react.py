"""mode=react reads the component tree from the fibers React keeps on the DOM, with simple props and keys —
real Chromium against a page built with React's pinned production UMD build (scripts/test-deps: var/react-npm)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.website import TestSite, html

pytestmark = pytest.mark.e2e

UMD = Path(__file__).resolve().parents[2] / "var" / "react-npm" / "node_modules"

_APP = """
const h = React.createElement;
function Header({title, sticky}) { return h('header', null, h('h1', null, title)); }
const Title = React.memo(Header);
function Product({name, price, onBuy, tags}) { return h('li', null, name + ' $' + price); }
const BuyButton = React.forwardRef(function BuyButton(props, ref) { return h('button', {ref}, props.label); });
class Basket extends React.Component { render() { return h('p', null, 'Basket: ' + this.props.count); } }
function ProductList({items}) {
  return h('ul', null, items.map(p => h(Product, {key: p.sku, name: p.name, price: p.price, onBuy: () => 0, tags: ['x']})));
}
function App() {
  return h(React.Fragment, null,
    h(Title, {title: 'Shop', sticky: true}),
    h('main', null, h(ProductList, {items: [{sku: 'a1', name: 'Harbour flat', price: 450},
                                            {sku: 'b2', name: 'Garden cottage', price: 380}]}),
      h(BuyButton, {label: 'Buy'}), h(Basket, {count: 2, owner: null})));
}
ReactDOM.createRoot(document.getElementById('root')).render(h(App));
"""


@pytest.fixture(scope="module")
def pages():
    react, dom = UMD / "react/umd/react.production.min.js", UMD / "react-dom/umd/react-dom.production.min.js"
    if not (react.is_file() and dom.is_file()):
        pytest.fail(f"{react.parent.parent.parent} has no React UMD build: run ./scripts/bootstrap")
    js = {"content-type": "text/javascript"}
    routes = {
        "/react.js": (200, js, react.read_bytes()),
        "/react-dom.js": (200, js, dom.read_bytes()),
        "/app.js": (200, js, _APP.encode()),
        "/shop": html(
            b'<!doctype html><html lang="en"><head><title>Shop</title></head><body><div id="root"></div>'
            b'<script src="/react.js"></script><script src="/react-dom.js"></script>'
            b'<script src="/app.js"></script></body></html>'
        ),
        "/plain": html(
            b'<!doctype html><html lang="en"><head><title>Plain</title></head><body><p>Hi</p></body></html>'
        ),
    }
    with TestSite(routes) as server:
        yield server


def test_mode_react_lists_the_component_tree_with_keys_and_simple_props(browse, pages, tmp_path):
    out = browse().call({"action": "browse", "url": f"{pages.url}/shop", "mode": "react", "wait_for": "li"})
    assert out.splitlines() == [
        "App",
        '  Header title="Shop" sticky=true',
        "  ProductList",
        '    Product key="a1" name="Harbour flat" price=450',
        '    Product key="b2" name="Garden cottage" price=380',
        '  ForwardRef(BuyButton) label="Buy"',
        "  Basket count=2 owner=null",
    ]
    assert (tmp_path / "outputs/react.txt").read_text() == out + "\n"


def test_a_page_without_react_says_so(browse, pages):
    out = browse().call({"action": "browse", "url": f"{pages.url}/plain", "mode": "react"})
    assert out == (
        f"no React tree on {pages.url}/plain: no element carries React's fibers (a page that renders "
        f"after it loads needs wait_for= its content first)"
    )
