"""A small classifier trained as PyTorch's quickstart trains one: a Dataset and
DataLoader, an nn.Module, a loss, an optimizer, train and test loops, a saved
and reloaded state dict. Data and starting weights come from numpy."""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(7)
centers = rng.standard_normal((3, 4)) * 2.0
labels_np = rng.integers(0, 3, 240)
points_np = centers[labels_np] + rng.standard_normal((240, 4))
features = torch.tensor(points_np, dtype=torch.float32)
labels = torch.tensor(labels_np)
training_data = TensorDataset(features[:180], labels[:180])
test_data = TensorDataset(features[180:], labels[180:])
batch_size = 30
train_dataloader = DataLoader(training_data, batch_size=batch_size)
test_dataloader = DataLoader(test_data, batch_size=batch_size)
for X, y in test_dataloader:
    print(f"Shape of X [N, C]: {X.shape}")
    print(f"Shape of y: {y.shape} {y.dtype}")
    break

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device")


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(4, 16),
            nn.ReLU(),
            nn.Linear(16, 16),
            nn.Tanh(),
            nn.Linear(16, 3),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
init = np.random.default_rng(3)
with torch.no_grad():
    for name, param in model.named_parameters():
        param.copy_(torch.tensor(init.uniform(-0.4, 0.4, tuple(param.shape))))
print(model)
print([(name, tuple(p.shape)) for name, p in model.named_parameters()])

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 3 == 0:
            loss, current = loss.item(), (batch + 1) * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(
        f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n"
    )
    return correct


epochs = 4
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train(train_dataloader, model, loss_fn, optimizer)
    accuracy = test(test_dataloader, model, loss_fn)
print("Done!")

state = model.state_dict()
weights = {k: v.clone() for k, v in state.items()}
restored = NeuralNetwork().to(device)
restored.load_state_dict(state)
restored.eval()
with torch.no_grad():
    x, y = test_data[0][0], test_data[0][1]
    pred = restored(x[None])
    predicted, actual = pred[0].argmax(0).item(), y.item()
    print(f'Predicted: "{predicted}", Actual: "{actual}"')
    probabilities = torch.softmax(pred, dim=1)
print(probabilities)
